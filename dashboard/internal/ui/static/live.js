// Lists kept current by a watch the console relays as server-sent events:
// the one reconnect policy every live part of the page shares.

// follow calls relist (which reads the whole list and resolves to its
// resourceVersion), then watches from there through watchURL(rv), handing
// each ADDED/MODIFIED/DELETED event to onEvent. A lost or expired watch is
// said on the page and followed by a new relist and watch a second later.
// started settles with the first relist; stop ends it all.
export function follow(setStatus, relist, watchURL, onEvent) {
  let rv = '', source = null, stopped = false;
  function watch() {
    if (stopped) return;
    source = new EventSource(watchURL(rv));
    source.onmessage = m => {
      const ev = JSON.parse(m.data);
      if (ev.type === 'ERROR') { source.close(); lost('watch expired'); return; }
      const v = ev.object?.metadata?.resourceVersion;
      if (v) rv = v;
      if (ev.type !== 'BOOKMARK') onEvent(ev);
    };
    source.onerror = () => { source.close(); lost('connection lost'); };
  }
  async function lost(why) {
    if (stopped) return;
    setStatus(`Live updates interrupted (${why}); reconnecting…`);
    await new Promise(r => setTimeout(r, 1000));
    if (stopped) return;
    try { rv = await relist(); watch(); setStatus('Live updates reconnected.'); } catch { lost(why); }
  }
  const started = relist().then(v => { rv = v; watch(); });
  return { started, stop: () => { stopped = true; source?.close(); } };
}

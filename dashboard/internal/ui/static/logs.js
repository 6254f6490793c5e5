// The pod page's log pane: lines from the console's log relay (server-sent
// events), kept in a bounded buffer so that the search filters what has
// arrived and what arrives next; matches are marked, every line is text.
import { el, clear } from './dom.js';

// MAX_LINES bounds the buffer: a chatty container cannot grow the page.
const MAX_LINES = 5000;

// marked returns line as a div whose occurrences of term are <mark>s.
function marked(line, term) {
  if (!term) return el('div', {}, line);
  const parts = line.split(term);
  const kids = [];
  parts.forEach((p, i) => {
    if (i) kids.push(el('mark', {}, term));
    if (p) kids.push(p);
  });
  return el('div', {}, kids);
}

// logPane returns the log controls and pane for pod (d names it) and the
// function that ends its stream.
export function logPane(pod, d) {
  const sel = el('select', { id: 'container' }, (pod.spec?.containers || []).map(c => el('option', { value: c.name }, c.name)));
  const follow = el('input', { type: 'checkbox', id: 'follow', checked: '' });
  const previous = el('input', { type: 'checkbox', id: 'previous' });
  const stamps = el('input', { type: 'checkbox', id: 'timestamps' });
  const search = el('input', { id: 'search', type: 'search' });
  const show = el('button', { type: 'button', id: 'show-logs' }, 'Show logs');
  const count = el('p', { id: 'log-count', 'aria-live': 'polite' });
  const pre = el('pre', { id: 'log', role: 'log', 'aria-label': 'Log', tabindex: '0' });
  // shown counts the lines in pre: those of lines that match, in order.
  let lines = [], shown = 0, src = null;
  const matches = line => !search.value || line.includes(search.value);
  const tell = () => {
    count.textContent = search.value ? `${shown} of ${lines.length} lines match` : `${lines.length} lines`;
  };
  const render = () => {
    clear(pre);
    shown = 0;
    for (const l of lines) if (matches(l)) { pre.append(marked(l, search.value)); shown++; }
    tell();
  };
  search.addEventListener('input', render);
  show.addEventListener('click', () => {
    src?.close();
    lines = [];
    render();
    const q = new URLSearchParams({ container: sel.value, tailLines: '500' });
    if (follow.checked) q.set('follow', 'true');
    if (previous.checked) q.set('previous', 'true');
    if (stamps.checked) q.set('timestamps', 'true');
    src = new EventSource(`/api/logs/${encodeURIComponent(d.namespace)}/${encodeURIComponent(d.name)}?${q}`);
    src.onmessage = m => {
      const line = JSON.parse(m.data);
      lines.push(line);
      if (matches(line)) { pre.append(marked(line, search.value)); shown++; }
      // The oldest lines leave the buffer, and those of them shown the pane.
      for (const old of lines.splice(0, Math.max(0, lines.length - MAX_LINES))) {
        if (matches(old)) { pre.firstChild.remove(); shown--; }
      }
      tell();
    };
    src.onerror = () => { src.close(); };
  });
  const box = el('section', { 'aria-labelledby': 'logs-heading' }, [el('h3', { id: 'logs-heading' }, 'Logs'),
    el('label', { for: 'container' }, 'Container '), sel,
    el('label', { for: 'follow' }, ' Follow '), follow, el('label', { for: 'previous' }, ' Previous '), previous,
    el('label', { for: 'timestamps' }, ' Timestamps '), stamps,
    el('label', { for: 'search' }, ' Search '), search, show, count, pre]);
  return { box, stop: () => src?.close() };
}

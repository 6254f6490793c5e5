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
  let lines = [], src = null;
  const matches = line => !search.value || line.includes(search.value);
  const tell = () => {
    const n = search.value ? lines.filter(matches).length : lines.length;
    count.textContent = search.value ? `${n} of ${lines.length} lines match` : `${lines.length} lines`;
  };
  const render = () => {
    clear(pre);
    for (const l of lines) if (matches(l)) pre.append(marked(l, search.value));
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
      if (lines.length > MAX_LINES) {
        lines.splice(0, lines.length - MAX_LINES);
        while (pre.childElementCount > MAX_LINES) pre.firstChild.remove();
      }
      if (matches(line)) pre.append(marked(line, search.value));
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

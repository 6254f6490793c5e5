// The HTTPRoute page's summary (gateway.networking.k8s.io): which
// Gateways it attaches to, for which hostnames, each rule's matches,
// filters and weighted backends, and what each Gateway's controller said
// about it. The object's whole YAML stays below, editable.
import { el } from './dom.js';

const ref = (r, ns) => `${r.namespace || ns}/${r.name}${r.sectionName ? ` (${r.sectionName})` : ''}${r.port ? ` :${r.port}` : ''}`;

function table(label, head, rows) {
  const t = el('table', { 'aria-label': label });
  t.append(el('tr', {}, head.map(h => el('th', { scope: 'col' }, h))));
  for (const r of rows) t.append(el('tr', {}, r.map(c => el('td', {}, c))));
  return t;
}

function match(m) {
  const parts = [];
  if (m.path) parts.push(`path ${m.path.type || 'PathPrefix'} ${m.path.value ?? '/'}`);
  if (m.method) parts.push(`method ${m.method}`);
  for (const h of m.headers || []) parts.push(`header ${h.name} ${h.type === 'RegularExpression' ? '~' : '='} ${h.value}`);
  for (const q of m.queryParams || []) parts.push(`query ${q.name} ${q.type === 'RegularExpression' ? '~' : '='} ${q.value}`);
  return parts.join(', ') || 'any request';
}

// routeDetails returns the summary of HTTPRoute obj.
export function routeDetails(obj) {
  const ns = obj.metadata.namespace;
  const spec = obj.spec || {};
  const box = el('section', { id: 'route', 'aria-labelledby': 'route-heading' });
  box.append(el('h3', { id: 'route-heading' }, 'Route'),
    el('p', {}, `Gateways: ${(spec.parentRefs || []).map(r => ref(r, ns)).join(', ') || '(none)'}`),
    el('p', {}, `Hostnames: ${(spec.hostnames || []).join(', ') || 'any'}`));
  const rules = (spec.rules || []).map((r, i) => [
    String(i + 1),
    (r.matches || [{ path: { type: 'PathPrefix', value: '/' } }]).map(match).join(' or '),
    (r.filters || []).map(f => f.type).join(', ') || '-',
    (r.backendRefs || []).map(b => `${ref(b, ns)}${b.weight !== undefined ? ` weight ${b.weight}` : ''}`).join(', ') || '-',
  ]);
  box.append(table('Rules', ['Rule', 'Matches', 'Filters', 'Backends'], rules));
  const status = [];
  for (const p of obj.status?.parents || []) {
    for (const c of p.conditions || []) status.push([ref(p.parentRef || {}, ns), p.controllerName || '', c.type, c.status, c.reason || '', c.message || '']);
  }
  box.append(el('h3', {}, 'Status'), status.length
    ? table('Status by Gateway', ['Gateway', 'Controller', 'Condition', 'Status', 'Reason', 'Message'], status)
    : el('p', {}, 'No Gateway controller has reported on this route yet.'));
  return box;
}

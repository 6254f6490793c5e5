// The workload page's live parts: the rollout figures, the ReplicaSets a
// Deployment owns and the pods its selector picks, each kept current by a
// watch relayed by the console (no polling).
import { el, clear } from './dom.js';
import { follow } from './live.js';

// selectorString is a LabelSelector as a list's labelSelector parameter.
export function selectorString(sel) {
  const parts = Object.entries(sel?.matchLabels || {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel?.matchExpressions || []) {
    const vals = (e.values || []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${vals})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${vals})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

// live keeps the objects of a list (path, with query) current, calling
// onChange with the map after each change (at most once a frame); the
// returned function stops it.
export function live(call, setStatus, path, query, onChange) {
  const items = new Map();
  let stopped = false, queued = false;
  const changed = () => { if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; if (!stopped) onChange(items); }); } };
  async function relist() {
    items.clear();
    let cont = '', rv = '';
    do {
      const q = new URLSearchParams(query);
      q.set('limit', '500');
      if (cont) q.set('continue', cont);
      const r = await call(`/api/k8s${path}?${q}`);
      for (const o of r.items || []) items.set(o.metadata.uid, o);
      rv = r.metadata?.resourceVersion || rv;
      cont = r.metadata?.continue;
    } while (cont);
    changed();
    return rv;
  }
  const watchURL = rv => {
    const q = new URLSearchParams(query);
    q.set('resourceVersion', rv);
    return `/api/watch${path}?${q}`;
  };
  const f = follow(setStatus, relist, watchURL, ev => {
    const o = ev.object;
    if (ev.type === 'DELETED') items.delete(o.metadata.uid); else items.set(o.metadata.uid, o);
    changed();
  });
  f.started.catch(e => setStatus(`Cannot list ${path}: ${e.message}`));
  return () => { stopped = true; f.stop(); };
}

const plural = (n, one) => `${n} ${one}${n === 1 ? '' : 's'}`;

function table(label, head, rows) {
  const t = el('table', { 'aria-label': label });
  t.append(el('tr', {}, head.map(h => el('th', { scope: 'col' }, h))));
  for (const r of rows) t.append(el('tr', {}, r.map(c => el('td', {}, c))));
  return t;
}

// workloadLive renders the live parts of a workload's page into box and
// returns the function that stops their watches.
export function workloadLive(call, setStatus, obj, d, listPath) {
  const box = el('section', { 'aria-labelledby': 'workload-heading' });
  const rollout = el('p', { id: 'rollout', 'aria-live': 'polite' });
  const rsBox = el('div', { id: 'workload-replicasets' });
  const podBox = el('div', { id: 'workload-pods' });
  box.append(el('h3', { id: 'workload-heading' }, 'Rollout'), rollout);
  const ns = encodeURIComponent(d.namespace);
  const stops = [];
  stops.push(live(call, setStatus, listPath, { fieldSelector: `metadata.name=${d.name}` }, items => {
    const o = [...items.values()][0];
    if (!o) { rollout.textContent = 'Deleted.'; return; }
    const s = o.status || {};
    rollout.textContent = o.spec?.replicas === undefined
      ? `Active: ${s.active || 0}, succeeded: ${s.succeeded || 0}, failed: ${s.failed || 0}`
      : `Desired ${o.spec.replicas}, current ${s.replicas || 0}, updated ${s.updatedReplicas || 0}, ready ${s.readyReplicas || 0}, available ${s.availableReplicas || 0}`;
  }));
  const sel = selectorString(obj.spec?.selector);
  if (d.resource === 'deployments') {
    box.append(el('h3', {}, 'ReplicaSets'), rsBox);
    stops.push(live(call, setStatus, `/apis/apps/v1/namespaces/${ns}/replicasets`, sel ? { labelSelector: sel } : {}, items => {
      const owned = [...items.values()].filter(rs => (rs.metadata.ownerReferences || []).some(r => r.uid === obj.metadata.uid));
      owned.sort((a, b) => (b.metadata.annotations?.['deployment.kubernetes.io/revision'] || 0) - (a.metadata.annotations?.['deployment.kubernetes.io/revision'] || 0));
      clear(rsBox);
      rsBox.append(el('p', { class: 'count' }, plural(owned.length, 'ReplicaSet')), table('ReplicaSets', ['Name', 'Desired', 'Current', 'Ready'],
        owned.map(rs => [el('a', { href: `#/obj/apis/apps/v1/namespaces/${d.namespace}/replicasets/${rs.metadata.name}` }, rs.metadata.name),
          String(rs.spec?.replicas ?? 0), String(rs.status?.replicas || 0), String(rs.status?.readyReplicas || 0)])));
    }));
  }
  if (sel) {
    box.append(el('h3', {}, 'Pods'), podBox);
    stops.push(live(call, setStatus, `/api/v1/namespaces/${ns}/pods`, { labelSelector: sel }, items => {
      const pods = [...items.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      clear(podBox);
      podBox.append(el('p', { class: 'count' }, plural(pods.length, 'pod')), table('Pods', ['Name', 'Phase', 'Node'],
        pods.map(p => [el('a', { href: `#/obj/api/v1/namespaces/${d.namespace}/pods/${p.metadata.name}` }, p.metadata.name),
          p.metadata.deletionTimestamp ? 'Terminating' : (p.status?.phase || ''), p.spec?.nodeName || ''])));
    }));
  }
  return { box, stop: () => stops.forEach(s => s()) };
}

// nodePodsLive renders the pods bound to node (the spec.nodeName field
// selector, as the kubelet lists them) into a box kept current by a watch,
// and returns it with the function that stops the watch.
export function nodePodsLive(call, setStatus, node) {
  const box = el('section', { 'aria-labelledby': 'node-pods-heading' });
  const list = el('div', { id: 'node-pods', 'aria-live': 'polite' });
  box.append(el('h3', { id: 'node-pods-heading' }, 'Pods on this node'), list);
  const stop = live(call, setStatus, '/api/v1/pods', { fieldSelector: `spec.nodeName=${node}` }, items => {
    const pods = [...items.values()].sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
    clear(list);
    list.append(el('p', { class: 'count' }, plural(pods.length, 'pod')), table('Pods on this node', ['Namespace', 'Name', 'Phase'],
      pods.map(p => [p.metadata.namespace,
        el('a', { href: `#/obj/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}` }, p.metadata.name),
        p.metadata.deletionTimestamp ? 'Terminating' : (p.status?.phase || '')])));
  });
  return { box, stop };
}

// The console's page. Everything from the cluster is rendered with
// textContent, never as markup.
import { el, clear, diffLines } from './dom.js';
import { terminalPanel } from './terminal.js';
import { workloadLive, nodePodsLive } from './workload.js';
import { follow } from './live.js';
import { logPane } from './logs.js';
import { routeDetails } from './routes.js';
import { virtualTable } from './vlist.js';

const main = document.getElementById('view');
const statusBox = document.getElementById('status');
let stopView = () => {};

function csrf() {
  const m = document.cookie.match(/(?:^|; )trireme-csrf=([0-9a-f]+)/);
  return m ? m[1] : '';
}

class APIError extends Error {
  constructor(status) { super(status.message || 'request failed'); this.status = status; }
}

// retryAfter is how long a read that never reached the console waits
// before each new try (ms).
const retryAfter = [250, 500, 1000, 2000];

// call sends a request to the console and returns its JSON answer, or
// throws an APIError. A read that fails to reach the console at all (the
// fetch itself fails: Chromium drops requests in flight when the host's
// network changes, a laptop wakes up) is tried again a few times; one that
// still fails, and any other request that does, is an APIError the views
// show, never a blank page.
async function call(url, opts = {}) {
  const read = !opts.method || opts.method === 'GET';
  let r, text;
  for (let i = 0; ; i++) {
    try {
      r = await fetch(url, { credentials: 'same-origin', ...opts });
      text = await r.text();
      break;
    } catch (e) {
      if (!read || i >= retryAfter.length) throw new APIError({ reason: 'Unreachable', message: `could not reach the console: ${e.message}` });
      await new Promise(res => setTimeout(res, retryAfter[i]));
    }
  }
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = { message: text }; }
  if (r.status === 401 && !url.startsWith('/login')) { showSignIn(body?.message || 'signed out'); throw new APIError(body || {}); }
  if (!r.ok) throw new APIError({ code: r.status, ...(body || {}) });
  return body;
}

function post(url, data) {
  return call(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf() }, body: JSON.stringify(data) });
}

function base(gv) { return gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`; }

function setStatus(msg) { statusBox.textContent = msg; }

function errorBox(err) {
  const st = err.status || { message: String(err) };
  const box = el('div', { class: 'error', role: 'alert' });
  const head = st.code === 403 ? `Forbidden: ${st.message}` : `${st.reason || 'Error'}${st.code ? ` (${st.code})` : ''}: ${st.message}`;
  box.append(el('p', {}, head));
  const causes = st.details?.causes || [];
  if (causes.length) {
    const ul = el('ul');
    for (const c of causes) ul.append(el('li', {}, `${c.field || ''}: ${c.message || c.reason || ''}`));
    box.append(ul);
  }
  return box;
}

function showSignIn(reason) {
  stopView();
  document.getElementById('signin').hidden = false;
  document.getElementById('nav').hidden = true;
  document.getElementById('signout').hidden = true;
  main.hidden = true;
  document.getElementById('who').textContent = '';
  document.getElementById('reason').textContent = reason || '';
}

async function signIn(ev) {
  ev.preventDefault();
  const form = new URLSearchParams({ token: document.getElementById('token').value });
  try {
    await call('/login', { method: 'POST', headers: { 'X-CSRF-Token': csrf() }, body: form });
    document.getElementById('token').value = '';
    await start();
  } catch (e) {
    document.getElementById('reason').textContent = `Sign-in refused: ${e.message}`;
  }
}

async function signOut() {
  await call('/logout', { method: 'POST', headers: { 'X-CSRF-Token': csrf() } });
  showSignIn('Signed out');
}

async function canI(checks) {
  try { return await post('/api/can-i', checks); } catch (e) { return checks.map(c => ({ ...c, allowed: false, reason: e.message })); }
}

function parseHash() {
  const h = location.hash.replace(/^#\/?/, '') || 'overview';
  const [path, query] = h.split('?');
  return { parts: path.split('/').map(decodeURIComponent), q: new URLSearchParams(query || '') };
}

async function route() {
  stopView();
  stopView = () => {};
  setStatus('');
  clear(main);
  const { parts, q } = parseHash();
  try {
    if (parts[0] === 'overview') await overview();
    else if (parts[0] === 'list') await listView(parts.slice(1, -1).join('/'), parts[parts.length - 1], q);
    else if (parts[0] === 'obj') await objectView('/' + parts.slice(1).join('/'), q);
    else if (parts[0] === 'crds') await crdView();
    else main.append(el('p', {}, 'No such view.'));
  } catch (e) {
    if (!(e instanceof APIError)) throw e;
    // A list of an API the cluster does not serve (a CRD not installed).
    if (parts[0] === 'list' && e.status.code === 404) {
      main.append(el('p', { class: 'error', role: 'alert' }, `This cluster does not serve ${parts[parts.length - 1]} (${parts.slice(1, -1).join('/')}): its API is not installed.`));
    } else main.append(errorBox(e));
  }
}

async function listAll(path) {
  let items = [], cont = '';
  do {
    const r = await call(`/api/k8s${path}?limit=500${cont ? '&continue=' + encodeURIComponent(cont) : ''}`);
    items = items.concat(r.items || []);
    cont = r.metadata?.continue;
  } while (cont);
  return items;
}

// overview draws its sections as each answers. A section the user may
// not read (the view role lists no nodes) shows the API's refusal in its
// place, and the others stay.
async function overview() {
  main.append(el('h2', {}, 'Overview'));
  const section = async (title, draw) => {
    const box = el('section', { 'aria-label': title });
    main.append(box);
    try {
      box.append(...await draw());
    } catch (e) {
      if (!(e instanceof APIError)) throw e;
      box.replaceChildren(el('h3', {}, title), errorBox(e));
    }
  };
  await Promise.all([
    section('Nodes', async () => {
      const [nodes, usage] = await Promise.all([listAll('/api/v1/nodes'), nodeUsage()]);
      const nt = el('table', { 'aria-label': 'Nodes' });
      nt.append(el('tr', {}, [el('th', {}, 'Node'), el('th', {}, 'Ready'), el('th', {}, 'CPU'), el('th', {}, 'Memory')]));
      for (const n of nodes) {
        const ready = (n.status?.conditions || []).find(c => c.type === 'Ready')?.status || 'Unknown';
        const u = usage?.[n.metadata.name];
        nt.append(el('tr', {}, [el('td', {}, el('a', { href: `#/obj/api/v1/nodes/${n.metadata.name}` }, n.metadata.name)), el('td', {}, ready),
          el('td', {}, u ? u.cpu : 'n/a'), el('td', {}, u ? u.memory : 'n/a')]));
      }
      const out = [el('h3', {}, `Nodes (${nodes.length})`), nt];
      if (usage === null) out.push(el('p', {}, 'metrics.k8s.io is not available: no CPU or memory figures.'));
      return out;
    }),
    section('Pods', async () => {
      // A Table list per phase, its rows without their objects: the
      // counts, without reading every pod whole (5,000 running pods are
      // some 10 MB of JSON).
      const phases = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];
      const counts = await Promise.all(phases.map(ph => countRows(`/api/v1/pods?fieldSelector=${encodeURIComponent('status.phase=' + ph)}`)));
      const pt = el('table', { 'aria-label': 'Pods by phase' });
      pt.append(el('tr', {}, [el('th', {}, 'Phase'), el('th', {}, 'Pods')]));
      phases.forEach((ph, i) => { if (counts[i]) pt.append(el('tr', {}, [el('td', {}, ph), el('td', {}, String(counts[i]))])); });
      return [el('h3', {}, `Pods (${counts.reduce((a, b) => a + b, 0)})`), pt];
    }),
    section('Recent Warning events', async () => {
      const events = await call('/api/k8s/api/v1/events?fieldSelector=type%3DWarning&limit=50');
      const et = el('table', { 'aria-label': 'Warning events' });
      et.append(el('tr', {}, [el('th', {}, 'Object'), el('th', {}, 'Reason'), el('th', {}, 'Message'), el('th', {}, 'Count')]));
      for (const e of (events.items || []).slice(-50).reverse()) {
        et.append(el('tr', {}, [el('td', {}, `${e.involvedObject?.kind}/${e.involvedObject?.namespace || ''}/${e.involvedObject?.name}`),
          el('td', {}, e.reason || ''), el('td', {}, e.message || ''), el('td', {}, String(e.count || 1))]));
      }
      return [el('h3', {}, 'Recent Warning events'), et];
    }),
  ]);
}

// countRows counts the objects of a list path (which has a query
// already) as Table rows without their objects, page by page.
async function countRows(path) {
  let n = 0, cont = '';
  do {
    const t = await call(`/api/k8s${path}&as=table&includeObject=None&limit=1000${cont ? '&continue=' + encodeURIComponent(cont) : ''}`);
    n += (t.rows || []).length;
    cont = t.metadata?.continue;
  } while (cont);
  return n;
}

// nodeUsage is each node's usage from metrics.k8s.io, or null when the
// cluster does not serve it (or the user may not read it).
async function nodeUsage() {
  try {
    const usage = {};
    const m = await call('/api/k8s/apis/metrics.k8s.io/v1beta1/nodes');
    for (const n of m.items || []) usage[n.metadata.name] = n.usage;
    return usage;
  } catch { return null; }
}

// listView shows the server-side Table of a resource, kept live by a
// watch and drawn by virtualTable, so thousands of rows stay fast: the
// first page is small so rows show at once, the rest come in large pages.
async function listView(gv, resource, q) {
  const ns = q.get('ns') || '';
  const path = `${base(gv)}${ns ? `/namespaces/${encodeURIComponent(ns)}` : ''}/${resource}`;
  main.append(el('h2', {}, resource));
  const nsInput = el('input', { id: 'ns', value: ns, placeholder: 'all namespaces' });
  const filter = el('form', {}, [el('label', { for: 'ns' }, 'Namespace '), nsInput, el('button', { type: 'submit' }, 'Filter')]);
  filter.addEventListener('submit', ev => { ev.preventDefault(); location.hash = `#/list/${gv}/${resource}${nsInput.value ? '?ns=' + encodeURIComponent(nsInput.value) : ''}`; });
  const count = el('p', { 'aria-live': 'polite' });

  let columns = [];
  const objPath = r => {
    const m = r.object?.metadata || {};
    return `${base(gv)}${m.namespace ? `/namespaces/${m.namespace}` : ''}/${resource}/${m.name}`;
  };
  const cellText = c => (typeof c === 'object' && c !== null ? JSON.stringify(c) : String(c ?? ''));
  const list = virtualTable(resource, r => [el('td', {}, r.object?.metadata?.namespace || ''),
    ...r.cells.map((c, i) => el('td', {}, i === 0 ? el('a', { href: `#/obj${objPath(r)}` }, String(c)) : cellText(c)))],
  r => String(r.cells[0]));
  main.append(filter, count, list.element);
  const key = r => r.object?.metadata?.uid || `${r.object?.metadata?.namespace}/${r.object?.metadata?.name}`;
  const counted = () => {
    const text = `${list.size()} ${resource}`;
    if (count.textContent !== text) count.textContent = text;
  };
  const show = () => { counted(); list.paint(); };

  // relist reads the list page by page. The first load draws each page as
  // it comes; a relist after a lost watch keeps the rows shown until the
  // whole new list is in.
  async function relist() {
    const progressive = list.size() === 0;
    const fresh = [];
    let cont = '', rv = '', limit = 100;
    do {
      const t = await call(`/api/k8s${path}?as=table&includeObject=Metadata&limit=${limit}${cont ? '&continue=' + encodeURIComponent(cont) : ''}`);
      limit = 1000;
      const defs = t.columnDefinitions || [];
      columns = defs.filter(c => !c.priority);
      const idx = defs.map((c, i) => (c.priority ? -1 : i)).filter(i => i >= 0);
      const page = (t.rows || []).map(r => [key(r), { ...r, cells: idx.map(i => r.cells[i]) }]);
      rv = t.metadata?.resourceVersion || rv;
      cont = t.metadata?.continue;
      list.columns(['Namespace', ...columns.map(c => c.name)]);
      if (progressive) {
        for (const [k, r] of page) list.set(k, r);
        show();
      } else fresh.push(...page);
    } while (cont);
    if (!progressive) {
      list.reset();
      for (const [k, r] of fresh) list.set(k, r);
      show();
    }
    return rv;
  }
  const f = follow(setStatus, relist, rv => `/api/watch${path}?as=table&includeObject=Metadata&resourceVersion=${encodeURIComponent(rv)}`, ev => {
    const allCols = ev.object?.columnDefinitions;
    for (const r of ev.object?.rows || []) {
      const cells = allCols && allCols.length ? r.cells.filter((_, i) => !allCols[i].priority) : r.cells.slice(0, columns.length);
      if (ev.type === 'DELETED') list.remove(key(r)); else list.set(key(r), { ...r, cells });
    }
    setStatus('');
    counted();
    list.schedule();
  });
  stopView = f.stop;
  await f.started;
  document.body.dataset.listPainted = String(performance.now());
}

const actionsFor = {
  deployments: ['scale', 'restart', 'delete'], statefulsets: ['scale', 'restart', 'delete'],
  replicasets: ['scale', 'delete'], daemonsets: ['restart', 'delete'], nodes: ['cordon', 'uncordon', 'drain', 'delete'],
};

const workloads = new Set(['deployments', 'statefulsets', 'daemonsets', 'replicasets', 'jobs']);

function describe(path) {
  const p = path.split('/').filter(Boolean);
  const core = p[0] === 'api';
  const group = core ? '' : p[1];
  const rest = core ? p.slice(2) : p.slice(3);
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length > 2) { namespace = rest[1]; rest.splice(0, 2); }
  return { group, resource: rest[0], name: rest[1], namespace };
}

async function objectView(path, q) {
  const d = describe(path);
  const obj = await call(`/api/k8s${path}`);
  main.append(el('h2', {}, `${obj.kind} ${d.namespace ? d.namespace + '/' : ''}${d.name}`));
  const verbs = actionsFor[d.resource] || ['delete'];
  const checkOf = v => ({ verb: v === 'delete' ? 'delete' : 'patch', group: d.group, resource: d.resource,
    subresource: v === 'scale' ? 'scale' : '', namespace: d.namespace, name: d.name });
  const checks = [...verbs.map(checkOf), { ...checkOf('apply'), verb: 'patch' }];
  const answers = await canI(checks);
  const bar = el('div', { role: 'toolbar', 'aria-label': 'Actions' });
  const out = el('div', { 'aria-live': 'polite' });
  verbs.forEach((v, i) => {
    const a = answers[i];
    if (!a.allowed) { bar.append(el('span', { class: 'denied' }, `${v}: not allowed (${a.reason}) `)); return; }
    const b = el('button', { type: 'button', 'data-action': v }, v);
    let replicas = null;
    if (v === 'scale') {
      replicas = el('input', { id: 'replicas', type: 'number', min: '0', value: String(obj.spec?.replicas ?? 1) });
      bar.append(el('label', { for: 'replicas' }, 'Replicas '), replicas);
    }
    b.addEventListener('click', async () => {
      const body = { path };
      if (replicas) body.replicas = Number(replicas.value);
      if (v === 'delete' && !confirm(`Delete ${d.name}?`)) return;
      if (v === 'drain' && !confirm(`Drain ${d.name}: cordon it and evict its pods?`)) return;
      clear(out);
      try {
        const res = await post(`/api/action/${v}`, body);
        if (v === 'drain') { out.append(drainReport(res)); return; }
        out.append(el('p', {}, `${v}: done`));
        // A scale shows in the live rollout below; the other changes redraw the page.
        if (v === 'delete') history.back(); else if (v !== 'scale') route();
      } catch (e) { out.append(errorBox(e)); }
    });
    bar.append(b);
  });
  main.append(bar, out);
  if (d.resource === 'nodes') {
    main.append(el('p', { id: 'node-state' }, obj.spec?.unschedulable ? 'Scheduling: disabled (cordoned)' : 'Scheduling: enabled'));
    const pods = nodePodsLive(call, setStatus, d.name);
    const prev = stopView;
    stopView = () => { prev(); pods.stop(); };
    main.append(pods.box);
  }

  if (workloads.has(d.resource)) {
    const w = workloadLive(call, setStatus, obj, d, path.slice(0, path.lastIndexOf('/')));
    const prev = stopView;
    stopView = () => { prev(); w.stop(); };
    main.append(w.box);
  }
  if (d.resource === 'pods') podDetails(obj, d);
  if (d.resource === 'httproutes') main.append(routeDetails(obj));
  if (d.resource === 'secrets') {
    const values = el('div');
    const show = el('button', { type: 'button' }, 'Show values');
    show.addEventListener('click', () => {
      clear(values);
      for (const [k, v] of Object.entries(obj.data || {})) values.append(el('p', {}, [el('strong', {}, k + ': '), el('code', {}, atob(v))]));
    });
    main.append(el('h3', {}, `Data keys: ${Object.keys(obj.data || {}).join(', ')}`), show, values);
  }

  // The edit view: JSON is YAML, and server-side apply takes it as is.
  const original = JSON.stringify(editable(obj, d), null, 2);
  const area = el('textarea', { id: 'yaml', rows: '24', 'aria-label': 'Object as YAML (JSON)' });
  area.value = original;
  const applyAllowed = answers[answers.length - 1].allowed;
  const result = el('div', { 'aria-live': 'polite' });
  const dry = el('button', { type: 'button', id: 'dryrun' }, 'Dry run and diff');
  const apply = el('button', { type: 'button', id: 'apply', disabled: '' }, 'Apply');
  let tried = '';
  dry.addEventListener('click', async () => {
    clear(result);
    try {
      const got = await post('/api/action/apply', { path, body: await withSecretValues(area.value, d, path), dryRun: true });
      // Against the object as it is now, not as the page was drawn: a
      // scale or a controller may have changed it since.
      const now = await call(`/api/k8s${path}`);
      const pre = el('pre', { role: 'region', 'aria-label': 'Diff' });
      for (const l of diffLines(JSON.stringify(editable(now, d), null, 2), JSON.stringify(editable(got, d), null, 2))) pre.append(el('div', {}, l));
      result.append(el('p', {}, 'Dry run accepted. Changes:'), pre);
      tried = area.value; apply.removeAttribute('disabled');
    } catch (e) { result.append(errorBox(e)); }
  });
  apply.addEventListener('click', async () => {
    clear(result);
    if (area.value !== tried) { result.append(el('p', {}, 'Run the dry run again: the text changed.')); return; }
    try { await post('/api/action/apply', { path, body: await withSecretValues(area.value, d, path) }); result.append(el('p', {}, 'Applied.')); }
    catch (e) { result.append(errorBox(e)); }
  });
  main.append(el('h3', {}, 'YAML'), el('label', { for: 'yaml' }, 'Edit the object, then dry-run it'), area);
  if (applyAllowed) main.append(dry, apply); else main.append(el('p', {}, `Editing not allowed: ${answers[answers.length - 1].reason}`));
  main.append(result);
}

// drainReport shows what a drain did with each pod of the node.
function drainReport(r) {
  const box = el('div', { id: 'drain-report' });
  const state = document.getElementById('node-state');
  if (state) state.textContent = 'Scheduling: disabled (cordoned)';
  box.append(el('p', {}, `Drained ${r.node}: ${r.evicted.length} evicted, ${r.skipped.length} skipped, ${r.refused.length} refused by a PodDisruptionBudget, ${r.failed.length} failed.`));
  for (const [title, list] of [['Evicted', r.evicted], ['Skipped', r.skipped], ['Refused (PodDisruptionBudget)', r.refused], ['Failed', r.failed]]) {
    if (!list.length) continue;
    const ul = el('ul', { 'aria-label': title });
    for (const p of list) ul.append(el('li', {}, `${p.namespace}/${p.name}${p.reason ? ': ' + p.reason : ''}`));
    box.append(el('h4', {}, title), ul);
  }
  if (r.refused.length) box.append(el('p', {}, 'Drain again once the budgets allow it.'));
  return box;
}

// editable is obj as the edit view shows it: without status, managed
// fields and resourceVersion, a Secret's values hidden.
function editable(obj, d) {
  const o = structuredClone(obj);
  delete o.status;
  if (o.metadata) { delete o.metadata.managedFields; delete o.metadata.resourceVersion; }
  if (d.resource === 'secrets' && o.data) o.data = Object.fromEntries(Object.keys(o.data).map(k => [k, HIDDEN]));
  return o;
}

// HIDDEN stands in the edit view for a Secret's value.
const HIDDEN = '(hidden)';

// withSecretValues is the edited text of a Secret with each value still
// reading HIDDEN put back as it is now, read again from the API, so that
// editing a label does not apply the placeholder over the data. Text that
// is not JSON, or of another resource, goes as it is.
async function withSecretValues(text, d, path) {
  if (d.resource !== 'secrets') return text;
  let o;
  try { o = JSON.parse(text); } catch { return text; }
  const hidden = Object.entries(o.data || {}).filter(([, v]) => v === HIDDEN);
  if (!hidden.length) return text;
  const now = await call(`/api/k8s${path}`);
  for (const [k] of hidden) if (now.data && k in now.data) o.data[k] = now.data[k];
  return JSON.stringify(o);
}

function podDetails(pod, d) {
  const ct = el('table', { 'aria-label': 'Containers' });
  ct.append(el('tr', {}, [el('th', {}, 'Container'), el('th', {}, 'Image'), el('th', {}, 'Ready'), el('th', {}, 'Restarts')]));
  for (const c of pod.spec?.containers || []) {
    const s = (pod.status?.containerStatuses || []).find(x => x.name === c.name) || {};
    ct.append(el('tr', {}, [el('td', {}, c.name), el('td', {}, c.image), el('td', {}, String(!!s.ready)), el('td', {}, String(s.restartCount || 0))]));
  }
  const labels = el('ul', { 'aria-label': 'Labels' });
  for (const [k, v] of Object.entries(pod.metadata?.labels || {})) labels.append(el('li', { class: 'label' }, `${k}=${v}`));
  main.append(el('p', {}, `Phase: ${pod.status?.phase || ''}, node: ${pod.spec?.nodeName || '(none)'}`), el('h3', {}, 'Labels'), labels, el('h3', {}, 'Containers'), ct);

  const logs = logPane(pod, d);
  const term = el('div');
  const prev = stopView;
  let stopTerm = () => {};
  stopView = () => { prev(); logs.stop(); stopTerm(); };
  canI([{ verb: 'create', group: '', resource: 'pods', subresource: 'exec', namespace: d.namespace, name: d.name }]).then(([a]) => {
    if (!a.allowed) { term.append(el('h3', {}, 'Terminal'), el('p', { class: 'denied' }, `Terminal not allowed (${a.reason})`)); return; }
    const t = terminalPanel(pod, csrf);
    stopTerm = t.stop;
    term.append(t.panel);
  });
  main.append(logs.box, term);
  call(`/api/k8s/api/v1/namespaces/${encodeURIComponent(d.namespace)}/events?fieldSelector=${encodeURIComponent('involvedObject.name=' + d.name)}`).then(evs => {
    const ul = el('ul', { 'aria-label': 'Events' });
    for (const e of evs.items || []) ul.append(el('li', {}, `${e.type} ${e.reason}: ${e.message}`));
    main.append(el('h3', {}, 'Events'), ul);
  }).catch(() => {});
}

async function crdView() {
  main.append(el('h2', {}, 'Custom resources'));
  const crds = await listAll('/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
  const ul = el('ul');
  for (const c of crds) {
    const v = (c.spec.versions || []).find(x => x.storage) || c.spec.versions[0];
    ul.append(el('li', {}, el('a', { href: `#/list/${c.spec.group}/${v.name}/${c.spec.names.plural}` }, `${c.spec.names.kind} (${c.spec.group})`)));
  }
  main.append(ul);
}

async function start() {
  try {
    const u = await call('/api/session');
    document.getElementById('signin').hidden = true;
    document.getElementById('nav').hidden = false;
    document.getElementById('signout').hidden = false;
    main.hidden = false;
    document.getElementById('who').textContent = `Signed in as ${u.username}`;
    await route();
  } catch { /* showSignIn already ran */ }
}

document.getElementById('signin').addEventListener('submit', signIn);
document.getElementById('signout').addEventListener('click', signOut);
window.addEventListener('hashchange', route);
start();

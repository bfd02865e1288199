// The console's client script: the upload form (check, register, drop), and
// the live lists fed by the server's `status` events. No framework, no build:
// the DOM is built with createElement and textContent, so no text from a sheet
// or a seller is ever parsed as HTML.

import { errorReason, rowReason, warningReason } from './row-reasons.js';

const body = document.body;
const lang = body.dataset.lang || 'en';
const page = body.dataset.page;
const token = body.dataset.token || '';
const t = JSON.parse(document.getElementById('strings').textContent);
const initial = JSON.parse(document.getElementById('initial').textContent);

/** h('div', { class: 'x', 'data-test': 'y' }, child, 'text', ...) */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const withToken = (url) => (token ? `${url}${url.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}` : url);
const authHeaders = () => (token ? { Authorization: `Bearer ${token}` } : {});

/** A write to the JSON API (cancel, pause, resume); then the view is read again at once. */
async function post(url, body) {
  const res = await fetch(url, {
    method: 'POST', credentials: 'same-origin',
    headers: { ...authHeaders(), ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const answer = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) {
    window.alert(answer.error ? errorReason(answer.error, lang) : `HTTP ${res.status}`);
    return;
  }
  const view = await fetch(withToken('/api/uploads'), { headers: authHeaders(), credentials: 'same-origin' }).then((r) => r.json()).catch(() => undefined);
  if (view) render(view);
}

/** A button that calls `action` on click. */
function button(attrs, text, action) {
  const el = h('button', { type: 'button', ...attrs }, text);
  el.addEventListener('click', (e) => { e.preventDefault(); action(el); });
  return el;
}

/**
 * Controls kept across live updates (a card or a section is rebuilt when its figures
 * change): the same node moves into the new one, so a confirmation shown, a reason
 * being typed and the focus survive an update.
 */
const keptControls = new Map();
function kept(key, make) {
  let el = keptControls.get(key);
  if (!el) keptControls.set(key, (el = make()));
  return el;
}

/** Moves the focus back into `el` after it was moved in the page (a move drops it). */
function refocus(el, active, start, end) {
  if (active && el.contains(active) && document.activeElement !== active) {
    active.focus();
    if (typeof start === 'number' && active.setSelectionRange) active.setSelectionRange(start, end);
  }
}

/** Cancel, then a confirmation in its place (data-test="confirm") before anything is sent. */
function cancelControl(u) {
  return kept(`cancel:${u.uploadId}`, () => makeCancelControl(u));
}

function makeCancelControl(u) {
  const box = h('span', { class: 'cancel-box' });
  const ask = button({ 'data-test': 'cancel', class: 'secondary' }, t.cancel, () => {
    box.replaceChildren(
      h('span', { class: 'confirm-text' }, t.cancelConfirmText),
      button({ 'data-test': 'confirm', class: 'danger' }, t.cancelConfirm, (b) => { b.disabled = true; void post(`/api/uploads/${u.uploadId}/cancel`); }),
      button({ 'data-test': 'confirm-no', class: 'secondary' }, t.cancelKeep, () => box.replaceChildren(ask)));
  });
  box.append(ask);
  return box;
}

function duration(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hh = Math.floor(total / 3600);
  const mm = Math.floor((total % 3600) / 60);
  const ss = total % 60;
  if (hh > 0) return `${hh}h ${mm}m`;
  if (mm > 0) return `${mm}m ${ss}s`;
  return `${ss}s`;
}

// a rule's window as written: 60000 -> "1m", 10000 -> "10s", 1500 -> "1500ms" (not "1m 0s", "2s")
function ruleWindow(ms) {
  if (ms >= 60000 && ms % 60000 === 0) return `${ms / 60000}m`;
  if (ms >= 1000 && ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

// ---- the upload form ----------------------------------------------------

function setupForm(form) {
  const input = form.querySelector('[data-test="file"]');
  const drop = form.querySelector('[data-test="drop"]');
  const fileName = form.querySelector('[data-test="file-name"]');
  const result = form.querySelector('[data-test="result"]');
  const errors = form.querySelector('[data-test="errors"]');
  const sellerInput = form.querySelector('[data-test="seller-input"]');
  const buttons = form.querySelectorAll('button');

  const showName = () => { fileName.textContent = input.files && input.files[0] ? input.files[0].name : ''; };
  input.addEventListener('change', showName);
  for (const ev of ['dragenter', 'dragover']) {
    drop.addEventListener(ev, (e) => { e.preventDefault(); drop.classList.add('over'); });
  }
  for (const ev of ['dragleave', 'drop']) drop.addEventListener(ev, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    if (e.dataTransfer && e.dataTransfer.files.length > 0) {
      input.files = e.dataTransfer.files;
      showName();
    }
  });

  function say(text, kind) {
    result.replaceChildren(h('p', { class: kind || '' }, text));
  }

  async function send(dryRun) {
    const file = input.files && input.files[0];
    if (!file) return say(t.chooseFirst, 'error');
    const data = new FormData();
    data.append('file', file, file.name);
    if (dryRun) data.append('dryRun', '1');
    if (sellerInput) {
      if (!sellerInput.value.trim()) return say(t.sellerRequired, 'error');
      data.append('seller', sellerInput.value.trim());
    }
    for (const b of buttons) b.disabled = true;
    say(dryRun ? t.checking : t.registering, 'busy');
    errors.replaceChildren();
    errors.hidden = true;
    try {
      const res = await fetch('/api/uploads', { method: 'POST', body: data, headers: authHeaders(), credentials: 'same-origin' });
      const answer = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
      if (!res.ok) return say(answer.error ? errorReason(answer.error, lang) : `HTTP ${res.status}`, 'error');
      showSummary(answer, dryRun);
    } catch (err) {
      say(String(err && err.message ? err.message : err), 'error');
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  }

  /** A bad row's reason beside its column: without the column's name again ("Row 3 · name is required"). */
  function reasonBeside(e) {
    const reason = rowReason(e.message, lang);
    return reason.startsWith(`${e.column} `) ? reason.slice(e.column.length + 1) : reason;
  }

  function showSummary(s, dryRun) {
    const invalidRows = new Set(s.errors.map((e) => e.row)).size;
    const valid = dryRun ? s.valid : s.rows - invalidRows;
    const lines = [h('p', { 'data-test': 'summary', 'data-upload-id': s.uploadId, 'data-enqueued': s.enqueued },
      `${t.rowsRead} ${s.rows} · ${t.valid} ${valid} · ${t.invalid} ${invalidRows}`,
      dryRun ? '' : ` · ${t.enqueued} ${s.enqueued}`)];
    if (s.alreadyUploaded) lines.push(h('p', { class: 'note', 'data-test': 'already-uploaded' }, dryRun ? t.checkedBefore : s.enqueued > 0 ? t.enqueuedAgain.replace('{n}', String(s.enqueued)) : t.alreadyUploaded));
    if (valid === 0) lines.push(h('p', { class: 'error' }, t.noneValid));
    else if (s.errors.length === 0 && dryRun) lines.push(h('p', { class: 'ok' }, t.allValid));
    for (const w of s.warnings || []) lines.push(h('p', { class: 'note' }, warningReason(w, lang, t.columns)));
    if (s.errors.length > 0) lines.push(h('p', {}, t.fixRows));
    result.replaceChildren(...lines);
    errors.replaceChildren(...s.errors.map((e) =>
      h('li', { 'data-row': e.row, 'data-column': e.column },
        h('span', { class: 'where' }, `${t.rowLabel} ${e.row} · ${t.columns[e.column] ?? e.column}`), ' ', h('span', { class: 'why' }, reasonBeside(e)))));
    errors.hidden = s.errors.length === 0;
  }

  form.querySelector('[data-test="check"]').addEventListener('click', () => send(true));
  form.querySelector('[data-test="register"]').addEventListener('click', () => send(false));
  form.addEventListener('submit', (e) => { e.preventDefault(); send(false); });
}

// ---- live lists -----------------------------------------------------------

function paceText(seller) {
  if (!seller || seller.etaMs <= 0) return '';
  const by = seller.pace === 'pool' ? t.pacePool : (page === 'ops' ? t.paceRuleOps : t.paceRule);
  return `${t.eta} ${duration(seller.etaMs)} (${by})`;
}

/**
 * The upload's state. While the API is unavailable its rows are held, whatever
 * the rule would allow: an upload under way reads "held", not "throttled".
 */
function stateBadge(u, seller, apiDown) {
  const held = apiDown && !u.done && !(seller && seller.paused) && (u.state === 'throttled' || u.state === 'running');
  return h('span', { class: `badge ${held ? 'held' : u.state}`, 'data-test': 'state', 'data-state': u.state }, held ? t.state_held : t[`state_${u.state}`]);
}

function uploadCard(u, seller, apiDown, idle) {
  // a cancelled upload's bar shows the rows that were sent, not the ones cancelled
  const finished = u.registered + u.duplicate + u.failed + (u.state === 'cancelled' ? 0 : (u.cancelled || 0));
  const pct = u.total > 0 ? Math.floor((finished * 100) / u.total) : 100;
  const facts = [];
  if (!u.done && seller && seller.paused) {
    facts.push(h('span', { 'data-test': 'paused', class: 'error' }, `${t[`pausedBy_${seller.paused.by}`] || t.state_paused}: ${seller.paused.reason}`));
  } else if (!u.done && apiDown) {
    facts.push(h('span', { 'data-test': 'held', class: 'error' }, t.heldForApi));
  } else if (!u.done && idle) {
    facts.push(h('span', { 'data-test': 'no-pool', class: 'error' }, t.waitingForPool));
  } else if (!u.done && seller) {
    facts.push(h('span', { 'data-test': 'next-permit' }, seller.nextPermitInMs > 0 ? `${t.nextPermit} ${duration(seller.nextPermitInMs)}` : t.permitFree));
    const eta = paceText(seller);
    if (eta) facts.push(h('span', { 'data-test': 'eta', 'data-pace': seller.pace }, eta));
  }
  const links = [h('a', { href: withToken(`/api/uploads/${u.uploadId}/report`), download: true, 'data-test': 'report' }, t.report)];
  if (u.state !== 'done' && u.state !== 'cancelled') links.push(cancelControl(u));
  if (u.failed + u.invalid > 0) {
    links.push(h('a', { href: withToken(`/api/uploads/${u.uploadId}/report?failedOnly=1`), download: true, 'data-test': 'failed-only' }, t.failedOnly));
  }
  return h('article', {
    class: `upload state-${u.state}`, 'data-test': 'upload', 'data-upload-id': u.uploadId, 'data-seller-id': u.sellerId,
    'data-total': u.total, 'data-registered': u.registered, 'data-duplicate': u.duplicate, 'data-failed': u.failed,
    'data-pending': u.pending, 'data-state': u.state,
  },
  h('header', {}, h('strong', { class: 'file' }, u.file || u.uploadId), stateBadge(u, seller, apiDown)),
  h('progress', { max: Math.max(u.total, 1), value: u.total > 0 ? finished : 1, 'aria-label': `${pct}%` }),
  h('p', { class: 'counts' },
    h('span', {}, `${pct}%`),
    h('span', {}, `${t.total} ${u.total}`),
    h('span', { class: 'ok' }, `${t.registered} ${u.registered}`),
    u.duplicate ? h('span', {}, `${t.duplicate} ${u.duplicate}`) : '',
    h('span', { class: u.failed ? 'error' : '' }, `${t.failed} ${u.failed}`),
    u.pending ? h('span', {}, `${t.pending} ${u.pending}`) : '',
    u.cancelled ? h('span', {}, `${t.cancelled} ${u.cancelled}`) : '',
    u.lost ? h('span', { class: 'error' }, `${t.lost} ${u.lost}`) : ''),
  facts.length ? h('p', { class: 'facts' }, facts) : '',
  u.failures && u.failures.length ? h('ul', { class: 'reasons' }, u.failures.slice(0, 5).map((f) => h('li', {}, `${f.count} × ${f.reason}`))) : '',
  h('p', { class: 'links' }, links));
}

/** "API unavailable since ..." on both pages while the breaker is open. */
function renderApi(view) {
  const el = document.querySelector('[data-test="api"]');
  if (!el) return;
  const down = view.api && view.api.available === false;
  el.hidden = !down;
  el.dataset.available = down ? '0' : '1';
  el.textContent = down ? `${t.apiDown} ${new Date(view.api.since).toLocaleTimeString()}` : '';
  // the operator's page: which rows got no answer, to set beside what the marketplace says of
  // itself (rows it refuses while it is up are held as in an outage when nothing tells them apart)
  const failing = down && view.pool && view.api.failing ? view.api.failing : [];
  if (failing.length === 0) return;
  const rows = new Map();
  for (const f of failing) rows.set(f.uploadId, [...(rows.get(f.uploadId) || []), f.row]);
  const named = (id) => {
    const u = view.uploads.find((x) => x.uploadId === id);
    return u ? `${u.file || id} (${u.sellerId})` : id;
  };
  el.append(h('span', { class: 'failing', 'data-test': 'api-failing' },
    `${t.apiFailing} ${[...rows].map(([id, list]) => `${named(id)} ${t.rowLabel} ${list.join(', ')}`).join('; ')}`));
}

const apiIsDown = (view) => Boolean(view.api && view.api.available === false);
/** No worker pool runs: unfinished uploads wait for one (an older server says nothing: not idle). */
const poolIdle = (view) => view.poolRunning === false;

function renderSeller(view) {
  renderApi(view);
  const list = document.querySelector('[data-test="uploads"]');
  const seller = view.sellers[0];
  // paused, whether or not an upload is under way: why and by whom
  const paused = document.querySelector('[data-test="seller-paused"]');
  paused.hidden = !(seller && seller.paused);
  paused.textContent = seller && seller.paused ? `${t.sellerPaused} (${t[`pausedBy_${seller.paused.by}`] || t.state_paused}: ${seller.paused.reason})` : '';
  if (view.uploads.length === 0) return list.replaceChildren(h('p', { class: 'empty' }, t.noUploads));
  const active = document.activeElement;
  list.replaceChildren(...view.uploads.map((u) => uploadCard(u, view.sellers.find((s) => s.sellerId === u.sellerId) || seller, apiIsDown(view), poolIdle(view))));
  refocus(list, active);
}

/** A seller's section on the operator page: its rule, its rate and its uploads. */
function sellerSection(s, uploads, apiDown, idle) {
  return h('section', {
    class: `seller${s.active ? ' active' : ''}`, 'data-test': 'seller', 'data-seller-id': s.sellerId, 'data-throttled': s.throttled ? '1' : '0',
    ...(s.paused ? { 'data-paused': s.paused.reason } : {}), 'data-rule-source': s.ruleSource || 'config',
  },
    h('header', {},
      h('strong', {}, s.sellerId),
      h('span', { class: 'rate', 'data-test': 'rate' }, `${s.recentSends} / ${s.limit} ${t.per} ${ruleWindow(s.windowMs)} (${t.rate}; ${t[`ruleFrom_${s.ruleSource || 'config'}`]})`),
      s.throttled && !apiDown ? h('span', { class: 'badge throttled' }, t.state_throttled) : '',
      s.paused ? h('span', { class: 'badge paused', 'data-test': 'paused' }, `${t[`pausedBy_${s.paused.by}`]}: ${s.paused.reason}`) : '',
      s.paused
        ? kept(`resume:${s.sellerId}:${s.paused.since}`, () => button({ 'data-test': 'resume', class: 'secondary' }, t.resume, () => void post(`/api/sellers/${encodeURIComponent(s.sellerId)}/resume`)))
        : kept(`pause:${s.sellerId}`, () => pauseControl((reason) => post(`/api/sellers/${encodeURIComponent(s.sellerId)}/pause`, { reason }), 'pause'))),
    h('div', { class: 'seller-uploads uploads' }, uploads.map((u) => uploadCard(u, s, apiDown, idle))));
}

/** Pause with an optional reason (an input beside the button). */
function pauseControl(send, hook, label = t.pause) {
  const reason = h('input', { type: 'text', class: 'reason', 'data-test': `${hook}-reason`, placeholder: t.pauseReason, 'aria-label': t.pauseReason, maxlength: 200 });
  return h('span', { class: 'pause-box' }, reason, button({ 'data-test': hook, class: 'secondary' }, label, () => {
    const why = reason.value.trim();
    reason.value = '';
    void send(why);
  }));
}

/**
 * Each seller's section as last built, with the data it was built from: with
 * hundreds of sellers, an update rebuilds only the sections whose data changed.
 */
const sellerSections = new Map();
// S2 before S10, as status lists them
const bySellerId = new Intl.Collator('en', { numeric: true }).compare;
let lastOpsView = initial;

function renderOps(view) {
  lastOpsView = view;
  renderApi(view);
  const pool = document.querySelector('[data-test="pool"]');
  pool.dataset.up = view.pool.up;
  pool.dataset.expected = view.pool.expected;
  pool.querySelector('.pool-figures').replaceChildren(
    view.pool.expected > 0
      ? h('span', { class: view.pool.up < view.pool.expected ? 'error' : 'ok' }, `${view.pool.up} / ${view.pool.expected} ${t.processesUp}`)
      : h('span', { class: 'error' }, t.noPool));
  const steer = document.querySelector('[data-test="steer-all"]');
  if (steer && !steer.dataset.built) {
    steer.dataset.built = '1';
    steer.replaceChildren(
      pauseControl((reason) => post('/api/pause-all', { reason }), 'pause-all', t.pauseAll),
      button({ 'data-test': 'resume-all', class: 'secondary' }, t.resumeAll, () => void post('/api/resume-all')));
  }
  const failures = document.querySelector('[data-test="failures"]');
  failures.replaceChildren(...(view.failures.length
    ? view.failures.slice(0, 20).map((f) => h('li', { 'data-reason': f.reason, 'data-count': f.count }, h('strong', {}, String(f.count)), ` × ${f.reason}`))
    : [h('li', { class: 'empty' }, t.noFailures)]));

  const filter = (document.querySelector('[data-test="filter"]').value || '').trim().toLowerCase();
  const uploadsOf = new Map();
  const latest = new Map();
  for (const u of view.uploads) {
    if (!uploadsOf.has(u.sellerId)) uploadsOf.set(u.sellerId, []);
    uploadsOf.get(u.sellerId).push(u);
    latest.set(u.sellerId, Math.max(latest.get(u.sellerId) || 0, u.createdAt));
  }
  // every seller (the filter narrows it): the active ones first, then the most recent uploads
  const sellers = view.sellers
    .filter((s) => !filter || s.sellerId.toLowerCase().includes(filter))
    .sort((a, b) => Number(b.active) - Number(a.active) || (latest.get(b.sellerId) || 0) - (latest.get(a.sellerId) || 0) || bySellerId(a.sellerId, b.sellerId));
  document.querySelector('[data-test="seller-count"]').textContent =
    sellers.length < view.sellers.length ? `${t.showing} ${sellers.length} ${t.of} ${view.sellers.length}` : `${sellers.length}`;
  const known = new Set(view.sellers.map((s) => s.sellerId));
  for (const id of sellerSections.keys()) if (!known.has(id)) sellerSections.delete(id);
  const active = document.activeElement;
  const [start, end] = active && typeof active.selectionStart === 'number' ? [active.selectionStart, active.selectionEnd] : [];
  const next = sellers.map((s) => {
    const uploads = uploadsOf.get(s.sellerId) || [];
    const data = JSON.stringify([s, uploads, apiIsDown(view), poolIdle(view)]);
    const known = sellerSections.get(s.sellerId);
    if (known && known.data === data) return known.el;
    const el = sellerSection(s, uploads, apiIsDown(view), poolIdle(view));
    sellerSections.set(s.sellerId, { data, el });
    return el;
  });
  const list = document.querySelector('[data-test="sellers"]');
  // the same sections in the same order: nothing moves
  if (next.length !== list.children.length || next.some((el, i) => list.children[i] !== el)) list.replaceChildren(...next);
  refocus(list, active, start, end);
}

const render = page === 'ops' ? renderOps : renderSeller;

/**
 * A stream that has said nothing for this long (the server sends an event at least
 * every 2 s: a status, or that its Redis does not answer) may be dead without having
 * closed (a proxy, a laptop waking up): the page stops calling itself live and opens
 * a new one.
 */
const SILENT_MS = 6000;

function connect() {
  const live = document.querySelector('[data-test="live"]');
  const notice = document.querySelector('[data-test="stale"]');
  let lastEventAt = Date.now();
  // the figures on the page are from here (the page was rendered with them)
  let freshAt = Date.now();
  let expired = false;
  let source;

  const isLive = () => {
    live.dataset.live = '1';
    live.textContent = t.live;
    notice.hidden = true;
    notice.textContent = '';
  };
  const notLive = (label, sentence) => {
    live.dataset.live = '0';
    live.textContent = label;
    if (sentence) {
      notice.hidden = false;
      notice.textContent = sentence.replace('{time}', new Date(freshAt).toLocaleTimeString());
    }
  };

  function open() {
    source = new EventSource(withToken('/api/events'));
    source.addEventListener('status', (e) => {
      lastEventAt = freshAt = Date.now();
      isLive();
      render(JSON.parse(e.data));
    });
    // the server's Redis does not answer: the figures shown are the last ones read
    source.addEventListener('unavailable', () => {
      lastEventAt = Date.now();
      notLive(t.notLive, t.liveRedisAway);
    });
    source.addEventListener('error', () => {
      notLive(t.offline);
      // a seller link that expired while the page was open: say so, instead of reconnecting for ever
      if (page !== 'seller') return;
      fetch(withToken('/api/uploads')).then((res) => {
        if (res.status !== 403) return;
        expired = true;
        source.close();
        live.textContent = t.linkExpired;
        live.classList.add('error');
      }, () => undefined);
    });
  }

  open();
  setInterval(() => {
    if (expired || Date.now() - lastEventAt < SILENT_MS) return;
    notLive(t.offline, t.liveSilent);
    source.close();
    lastEventAt = Date.now();
    open();
  }, 1000);
}

for (const form of document.querySelectorAll('[data-test="upload-form"]')) setupForm(form);
if (page === 'ops') {
  document.querySelector('[data-test="filter"]').addEventListener('input', () => renderOps(lastOpsView));
}
render(initial);
connect();

/**
 * The dashboard's one script (`/ui/app.js`), plain JavaScript served as it is: no build step, so
 * the Worker takes it as the text it is. What it does:
 *
 * - Loads the page's content: `/ui/part<path><query>` for the page's own path, with
 *   `Authorization: Bearer <token>` when the tab has one (sessionStorage only: no cookie, so no
 *   other site's request can act; never in a URL), and swaps it into `#view`.
 * - Signs in: a 401 shows the sign-in form (and, when a token was sent, says it is wrong); the
 *   token is kept for the tab until "Sign out".
 * - Acts: a `button[data-url]` or `form[data-url]` sends its request (`data-method`, a form's
 *   fields as JSON) after a confirmation in the `<dialog>` whose button is the action's verb, tells
 *   the outcome in `#status` (or the API's error in `#alert`) and reloads the content, or goes to
 *   `data-then`. A form with `data-fill` fills each `{name}` of its URL and confirmation from its
 *   field of that name (in the URL encoded), and of its done text from its fields and the API's
 *   answer (the Send event form: `{event}`, `{resumed}`; the Cancel form: `{state}`). The
 *   dialog's other button reads `data-dismiss` when the action has one ("Keep job" beside "Cancel
 *   job"), else Cancel. `button[data-bulk]` runs the same action of every row shown, after one
 *   confirmation. `form[data-goto]` goes to a page named by its input (the job search).
 * - Stays live: where the page runs on Node (`body[data-live="sse"]`), it reads `/ui/live` (SSE,
 *   through fetch so it carries the bearer header) for the queues the content names
 *   (`[data-live-queues]`) and reloads on news; elsewhere it reloads every `data-poll-ms`. It
 *   never reloads under a field being typed in or changed and not saved, and keeps the focus where
 *   it was.
 */
export const DASHBOARD_SCRIPT = `'use strict';
(() => {
  const KEY = 'emq.token';
  const body = document.body;
  const view = document.getElementById('view');
  const statusBox = document.getElementById('status');
  const alertBox = document.getElementById('alert');
  const signout = document.getElementById('signout');
  const dialog = document.getElementById('confirm');
  const dialogText = document.getElementById('confirm-text');
  const dialogOk = document.getElementById('confirm-ok');
  const dialogNo = document.getElementById('confirm-no');
  const pollMs = Number(body.dataset.pollMs || 5000);
  const MAX_LIVE = Number(body.dataset.liveMax || 50);
  let stream = null;
  let streamFor = '';
  let deferred = false;
  let timer = 0;
  let loading = null;
  let again = null;

  const token = () => sessionStorage.getItem(KEY) || '';
  const auth = (extra) => {
    const h = Object.assign({}, extra);
    if (token()) h.Authorization = 'Bearer ' + token();
    return h;
  };
  const say = (text) => { alertBox.textContent = ''; statusBox.textContent = text; };
  const warn = (text) => { alertBox.textContent = text; };
  async function messageOf(res) {
    try {
      const json = await res.json();
      if (json && json.error && json.error.message) return json.error.message;
    } catch (e) { /* not JSON */ }
    return res.status + ' ' + res.statusText;
  }

  const partUrl = () => '/ui/part' + location.pathname.replace(/^\\/ui/, '') + location.search;
  // a field with the focus, or changed and not yet saved: a reload would take what was typed
  const typing = () => {
    const el = document.activeElement;
    if (el && view.contains(el) && el.matches('input, textarea, select')) return true;
    return Array.from(view.querySelectorAll('input, textarea')).some((i) => i.value !== i.defaultValue);
  };

  // quiet: a reload for news (live or timed), which gives way to a field being edited; otherwise a
  // load the person asked for (an action done, a sign-in), which always shows
  async function load(quiet) {
    // a load asked for while one is on its way runs after it: the one on its way may have read
    // the page before what is asked now (an action's write) happened
    if (loading) return (again ||= loading.then(() => { again = null; return load(quiet); }));
    loading = (async () => {
      let res;
      try {
        res = await fetch(partUrl(), { headers: auth(), cache: 'no-store' });
      } catch (e) {
        warn('The server does not answer: ' + e.message);
        return;
      }
      if (res.status === 401) return signIn(await messageOf(res));
      if (!res.ok) {
        warn(await messageOf(res));
        if (res.status === 404) view.innerHTML = '<p class="muted">Nothing here.</p>';
        return;
      }
      const html = await res.text();
      // typed into while this was on its way: keep what was typed, reload once it is saved or left
      if (quiet && typing()) { deferred = true; return; }
      const focused = document.activeElement && view.contains(document.activeElement) ? focusKey(document.activeElement) : null;
      view.innerHTML = html;
      view.removeAttribute('aria-busy');
      if (alertBox.dataset.sticky !== '1') alertBox.textContent = '';
      signout.hidden = !token();
      if (focused) {
        const again = view.querySelector(focused);
        // what had the focus is gone (a row reprocessed): the content keeps it, not the page
        if (again) again.focus();
        else view.focus();
      }
      follow();
    })();
    try { await loading; } finally { loading = null; }
  }

  function focusKey(el) {
    if (el.id) return '#' + CSS.escape(el.id);
    const row = el.closest('[data-job],[data-group],[data-queue],[data-scheduler]');
    const label = (el.getAttribute('aria-label') || el.textContent || '').trim();
    const tag = el.tagName.toLowerCase();
    const scope = row ? row.tagName.toLowerCase() + Array.from(row.attributes).filter((a) => a.name.startsWith('data-')).map((a) => '[' + a.name + '="' + CSS.escape(a.value) + '"]').join('') + ' ' : '';
    if (el.getAttribute('href')) return scope + tag + '[href="' + CSS.escape(el.getAttribute('href')) + '"]';
    if (label && tag === 'button') return scope + 'button[data-verb="' + CSS.escape(el.dataset.verb || label) + '"]';
    return null;
  }

  function signIn(message) {
    stop();
    const wrong = token() !== '';
    sessionStorage.removeItem(KEY);
    signout.hidden = true;
    view.innerHTML = '';
    view.append(document.getElementById('signin').content.cloneNode(true));
    alertBox.dataset.sticky = '';
    if (wrong) warn('That API token is wrong.');
    else if (message) statusBox.textContent = 'Sign in with the API token (EMQ_TOKEN).';
    const input = view.querySelector('input[name="token"]');
    if (input) input.focus();
  }

  // dismiss: the other button's word when "Cancel" would read as the action (Cancel job)
  function ask(text, verb, dismiss) {
    return new Promise((resolve) => {
      dialogText.textContent = text;
      dialogOk.textContent = verb;
      dialogNo.textContent = dismiss || 'Cancel';
      dialog.returnValue = '';
      dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
      dialog.showModal();
      dialogOk.focus();
    });
  }

  // the API's answer (an object, {} when it is not JSON), or null when it refused: told in #alert
  async function send(method, url, json) {
    const init = { method, headers: auth(json === undefined ? {} : { 'Content-Type': 'application/json' }) };
    if (json !== undefined) init.body = JSON.stringify(json);
    let res;
    try {
      res = await fetch(url, init);
    } catch (e) {
      warn('The server does not answer: ' + e.message);
      return null;
    }
    if (res.status === 401) { signIn(await messageOf(res)); return null; }
    if (!res.ok) { warn(await messageOf(res)); return null; }
    try {
      const answer = await res.json();
      return answer && typeof answer === 'object' ? answer : {};
    } catch (e) {
      return {};
    }
  }

  // each {name} of text replaced by values[name] (encoded in a URL); one without a value stays
  const fill = (text, values, encode) => text.replace(/\\{(\\w+)\\}/g, (all, name) =>
    values[name] === undefined ? all : encode ? encodeURIComponent(String(values[name]).trim()) : String(values[name]).trim());

  function formBody(form) {
    const kind = form.dataset.body;
    const fields = Object.fromEntries(new FormData(form).entries());
    const num = (v) => (v === undefined || String(v).trim() === '' ? null : Number(v));
    if (kind === 'limit') return { limit: num(fields.limit) };
    if (kind === 'rate') {
      const limit = num(fields.limit), periodMs = num(fields.periodMs);
      return limit === null && periodMs === null ? null : { limit, periodMs };
    }
    // no reason typed: none sent, and the API keeps its default
    if (kind === 'cancel') {
      const reason = String(fields.reason || '').trim();
      return reason === '' ? {} : { reason };
    }
    if (kind === 'event') {
      // empty is not "no data": a wait that resumes with null reads as one that timed out
      const text = String(fields.data || '').trim();
      if (text === '') throw new Error('Write the event data as JSON ({} for an empty object).');
      try {
        return { data: JSON.parse(text) };
      } catch (e) {
        throw new Error('The event data is not JSON: ' + e.message);
      }
    }
    return fields;
  }

  async function act(el, json) {
    const verb = el.dataset.verb;
    const fields = el.dataset.fill === undefined ? null : Object.fromEntries(new FormData(el).entries());
    const url = fields ? fill(el.dataset.url, fields, true) : el.dataset.url;
    const question = fields && el.dataset.confirm ? fill(el.dataset.confirm, fields) : el.dataset.confirm;
    if (question && !(await ask(question, verb, el.dataset.dismiss))) return;
    const answer = await send(el.dataset.method || 'POST', url, json);
    if (answer) {
      const done = el.dataset.done || verb + ': done';
      const told = fields ? fill(done, Object.assign({}, fields, answer)) : done;
      // told once the page shows it: what the status says is what the content shows
      if (el.dataset.then) { say(told); location.assign(el.dataset.then); return; }
      await load();
      say(told);
    }
  }

  async function bulk(el) {
    const rows = Array.from(view.querySelectorAll('tr[data-job] button[data-verb="' + CSS.escape(el.dataset.bulk) + '"]'));
    if (rows.length === 0) return say('Nothing shown to ' + el.dataset.bulk.toLowerCase() + '.');
    if (!(await ask(el.dataset.bulk + ' the ' + rows.length + ' job(s) shown?', el.dataset.bulk))) return;
    let done = 0;
    for (const row of rows) {
      if (!(await send(row.dataset.method || 'POST', row.dataset.url))) break;
      done++;
    }
    await load();
    say(el.dataset.bulk + ': ' + done + ' of ' + rows.length + ' done');
  }

  document.addEventListener('click', (event) => {
    const el = event.target.closest('button');
    if (!el) return;
    if (el === signout) { sessionStorage.removeItem(KEY); statusBox.textContent = 'Signed out.'; signIn(''); return; }
    if (el.dataset.bulk) { event.preventDefault(); bulk(el); return; }
    if (el.dataset.url && el.type === 'button') { event.preventDefault(); act(el); }
  });

  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (form.method === 'dialog') return;
    event.preventDefault();
    if (form.dataset.signin !== undefined) {
      const value = new FormData(form).get('token');
      if (value) sessionStorage.setItem(KEY, String(value).trim());
      statusBox.textContent = '';
      alertBox.textContent = '';
      load();
    } else if (form.dataset.get !== undefined) {
      const query = new URLSearchParams();
      for (const [name, value] of new FormData(form)) if (String(value).trim()) query.set(name, String(value).trim());
      location.assign(form.dataset.get + (query.size ? '?' + query : ''));
    } else if (form.dataset.goto !== undefined) {
      const value = String(new FormData(form).get('id') || '').trim();
      if (value) location.assign(form.dataset.goto + encodeURIComponent(value));
    } else if (form.dataset.url) {
      let json;
      try {
        json = formBody(form);
      } catch (e) {
        warn(e.message);
        return;
      }
      // what an earlier try was told is no longer so
      alertBox.textContent = '';
      act(form, json);
    }
  });

  document.addEventListener('focusout', () => {
    if (deferred && !typing()) { deferred = false; load(true); }
  });

  function changed() {
    if (typing() || dialog.open) { deferred = true; return; }
    clearTimeout(timer);
    timer = setTimeout(() => load(true), 250);
  }

  function stop() {
    if (stream) stream.abort();
    stream = null;
    streamFor = '';
  }

  // which queues the content shows: news of any of them reloads it
  function follow() {
    const marked = view.querySelector('[data-live-queues]');
    const queues = marked ? marked.dataset.liveQueues.split(' ').filter(Boolean) : [];
    const key = queues.join(' ');
    if (body.dataset.live !== 'sse' || key === streamFor) return;
    stop();
    // more queues than one response follows (or a hidden tab: no connection held for it): poll
    if (queues.length === 0 || queues.length > MAX_LIVE || document.visibilityState !== 'visible') return;
    streamFor = key;
    stream = new AbortController();
    listen(queues, stream.signal);
  }

  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') { follow(); changed(); } else stop();
  });

  async function listen(queues, signal) {
    const url = '/ui/live?' + queues.map((q) => 'queue=' + encodeURIComponent(q)).join('&');
    while (!signal.aborted) {
      try {
        const res = await fetch(url, { headers: auth({ Accept: 'text/event-stream' }), signal, cache: 'no-store' });
        if (res.status === 401) return signIn(await messageOf(res));
        // refused (too many queues for a URL, a server without it): poll instead
        if (!res.ok || !res.body) { if (stream && stream.signal === signal) stream = null; return; }
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\\n\\n')) >= 0) {
            const message = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            if (/^event: change$/m.test(message)) changed();
          }
        }
      } catch (e) {
        if (signal.aborted) return;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  // the Worker (and a safety net on Node, for queues with events off): reload while the tab shows
  setInterval(() => {
    if (document.visibilityState !== 'visible' || view.querySelector('[data-signin]')) return;
    if (body.dataset.live === 'sse' && stream) return;
    changed();
  }, pollMs);
  if (body.dataset.live === 'sse') setInterval(() => { if (document.visibilityState === 'visible' && stream) changed(); }, 30000);

  signout.hidden = !token();
  load();
})();
`;

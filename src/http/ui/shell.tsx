/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';

/** The most queues one `/ui/live` response follows; a page showing more reloads on a timer. */
export const MAX_LIVE_QUEUES = 50;

/** How the page stays live: `sse` reads `/ui/live` (Node), `poll` reloads every `pollMs` (the Worker). */
export interface Liveness {
  readonly mode: 'sse' | 'poll';
  readonly pollMs: number;
}

/**
 * Every page's frame, the same for each URL under `/ui`: header, status lines, the content area the
 * script fills, the sign-in form and the confirmation dialog. It holds no data, so it is served
 * without the token; the script fetches the content with it.
 */
export const Shell: FC<{ live: Liveness }> = ({ live }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <title>echomq</title>
      <link rel="icon" href="data:," />
      <link rel="stylesheet" href="/ui/app.css" />
      <script src="/ui/app.js" defer></script>
    </head>
    <body data-live={live.mode} data-poll-ms={String(live.pollMs)} data-live-max={String(MAX_LIVE_QUEUES)}>
      <a class="skip" href="#view">
        Skip to content
      </a>
      <header>
        <nav aria-label="Main">
          <a class="brand" href="/ui">
            echomq
          </a>
          <a href="/ui">Queues</a>
        </nav>
        <button type="button" id="signout" hidden>
          Sign out
        </button>
      </header>
      <div id="status" role="status" aria-live="polite"></div>
      <div id="alert" role="alert"></div>
      <main id="view" tabindex={-1} aria-busy="true">
        <p class="muted">Loading…</p>
      </main>
      <template id="signin">
        <form class="signin" data-signin aria-label="Sign in">
          <h1>Sign in</h1>
          <p class="muted">This dashboard calls the API with its token (EMQ_TOKEN). It is kept in this tab only, until you sign out or close it.</p>
          <p>
            <label>
              API token
              <input name="token" type="password" autocomplete="current-password" required />
            </label>
          </p>
          <button type="submit" class="primary">
            Sign in
          </button>
        </form>
      </template>
      <dialog id="confirm" aria-labelledby="confirm-text">
        <form method="dialog">
          <p id="confirm-text"></p>
          <div class="actions">
            <button value="cancel" id="confirm-no">
              Cancel
            </button>
            <button value="ok" id="confirm-ok" class="primary">
              OK
            </button>
          </div>
        </form>
      </dialog>
    </body>
  </html>
);

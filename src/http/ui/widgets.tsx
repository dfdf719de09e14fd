/** @jsxImportSource hono/jsx */
import type { Child, FC } from 'hono/jsx';
import type { RateLimit } from '../../queue/rate-limits.js';

/**
 * The dashboard's small pieces, shared by its pages: a state's badge (colour and word), a time,
 * an action button, paths of the pages and of the API.
 */

/** A state's badge: its colour and its word, so the colour is never the only signal. */
export const StateBadge: FC<{ state: string }> = ({ state }) => <span class={`state state-${state}`}>{state}</span>;

/** A server time (epoch ms) as UTC text, in a `<time>`; a dash for none. */
export const Time: FC<{ ms: number | null | undefined; precise?: boolean }> = ({ ms, precise }) =>
  ms === null || ms === undefined || !Number.isFinite(ms) ? <span class="muted">-</span> : <time datetime={new Date(ms).toISOString()}>{utc(ms, precise)}</time>;

/** `2026-12-01 20:43:03Z` (with `precise`, `20:43:03.417Z`): short, sortable, one zone for every reader. */
export const utc = (ms: number, precise = false): string => `${new Date(ms).toISOString().slice(0, precise ? 23 : 19).replace('T', ' ')}Z`;

/** A rate limit as `5 / 1000 ms`, or a dash for none. */
export const rateText = (rate: RateLimit | null | undefined): string => (rate ? `${rate.limit} / ${rate.periodMs} ms` : '-');

/** What an action button does: sent after a confirmation whose button is `verb`. */
export interface ActionProps {
  /** The button's word, and its confirmation's. */
  readonly verb: string;
  /** The API path it calls. */
  readonly url: string;
  /** The question the confirmation asks. */
  readonly confirm: string;
  /** What the status line says once it is done. */
  readonly done: string;
  /** The method (default POST). */
  readonly method?: 'POST' | 'PUT' | 'DELETE';
  /** A page to go to once it is done, instead of reloading this one. */
  readonly then?: string;
  /** Styled as a destructive action. */
  readonly danger?: boolean;
  /** Words for screen readers when the verb alone is ambiguous (a row's button). */
  readonly label?: string;
  /** The button's id: a pair that replace each other (Pause, Resume) share one, so the focus stays on it after a reload. */
  readonly id?: string;
}

/** A button that calls the API after a confirmation (the script's `button[data-url]`). */
export const Action: FC<ActionProps> = (p) => (
  <button
    type="button"
    id={p.id}
    class={p.danger ? 'danger' : undefined}
    data-verb={p.verb}
    data-method={p.method ?? 'POST'}
    data-url={p.url}
    data-confirm={p.confirm}
    data-done={p.done}
    data-then={p.then}
    aria-label={p.label}
  >
    {p.verb}
  </button>
);

/** A path segment, encoded. */
const seg = encodeURIComponent;

/** The dashboard's pages and the API's paths, built in one place. */
export const paths = {
  queues: (): string => '/ui',
  queue: (q: string, query = ''): string => `/ui/queues/${seg(q)}${query}`,
  dead: (q: string, query = ''): string => `/ui/queues/${seg(q)}/dead${query}`,
  job: (q: string, id: string): string => `/ui/queues/${seg(q)}/jobs/${seg(id)}`,
  group: (q: string, g: string): string => `/ui/queues/${seg(q)}/groups/${seg(g)}`,
  api: (q: string, ...rest: string[]): string => ['/v1/queues', q, ...rest].map((s, i) => (i === 0 ? s : seg(s))).join('/'),
};

/** A page's content: what the script swaps into `#view`; `live` names the queues whose news reloads it. */
export const Part: FC<{ live: readonly string[]; children?: Child }> = ({ live, children }) => (
  <div data-live-queues={live.join(' ')}>{children}</div>
);

/** A table's column headings; those named in `numeric` align right, as their numbers do. */
export const Columns: FC<{ names: readonly string[]; numeric?: readonly string[] }> = ({ names, numeric = [] }) => (
  <thead>
    <tr>
      {names.map((name) => (
        <th scope="col" class={numeric.includes(name) ? 'num' : undefined}>
          {name}
        </th>
      ))}
    </tr>
  </thead>
);

/** A whole-number field of a settings form, labelled; empty when `value` is null. */
export const NumberField: FC<{ label: string; name: string; min: number; value: number | null }> = ({ label, name, min, value }) => (
  <label>
    {label}
    <input name={name} type="number" min={String(min)} step="1" inputmode="numeric" value={value === null ? '' : String(value)} />
  </label>
);

/** A JSON value as indented text, or a dash for none. */
export const Json: FC<{ value: unknown; label: string }> = ({ value, label }) =>
  value === undefined ? <p class="muted">-</p> : <pre aria-label={label}>{JSON.stringify(value, null, 2)}</pre>;

/** Links to the page before and after a page of `shown` rows at `offset`, `size` a page (named `labels`, default Newer and Older). */
export const Pager: FC<{ href: (offset: number) => string; offset: number; size: number; shown: number; labels?: readonly [string, string] }> = ({ href, offset, size, shown, labels = ['Newer', 'Older'] }) => (
  <nav class="pager" aria-label="Pages">
    {offset > 0 ? <a href={href(Math.max(0, offset - size))}>{labels[0]}</a> : null}
    {shown === size ? <a href={href(offset + size)}>{labels[1]}</a> : null}
  </nav>
);

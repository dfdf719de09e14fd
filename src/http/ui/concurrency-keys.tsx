/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';
import type { QueueEvent } from '../../events/events.js';
import type { JobRecord } from '../../job.js';
import type { KeyInfo } from '../../queue/key-limits.js';
import { MAX_RATE_MS, type RateLimit } from '../../queue/rate-limits.js';
import { Columns, NumberField, paths, Time } from './widgets.js';

/**
 * Concurrency keys on the dashboard (docs/guides/job-controls.md): the queue page's table of its
 * keys (limit, running, parked, rate and until when the rate holds them) with the forms that set
 * or lift a key's limit and its rate through the public routes (`PUT /v1/queues/:q/keys/:key/limit`
 * and `.../rate`), and the sentence on a job's page that it was parked on a key.
 */

/** How many keys the queue page lists: the first by name; `emq keys` and `GET .../keys` list every one. */
export const KEYS_SHOWN = 50;

/** The units a rate's period is told in, largest first: the largest that divides it evenly is used. */
const PERIOD_UNITS: ReadonlyArray<readonly [string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1_000],
];

/** A rate's period as people say it: `1 min`, `90 s`, `1500 ms`. */
const periodText = (ms: number): string => {
  const unit = PERIOD_UNITS.find(([, size]) => ms >= size && ms % size === 0);
  return unit ? `${ms / unit[1]} ${unit[0]}` : `${ms} ms`;
};

/** A key's rate as `100 / 1 min` (its period in full ms in the title), or a dash for none, as its limit. */
const KeyRate: FC<{ rate: RateLimit | null }> = ({ rate }) =>
  rate === null ? <>-</> : <span title={`${rate.limit} starts per ${rate.periodMs} ms`}>{`${rate.limit} / ${periodText(rate.periodMs)}`}</span>;

/** The key field of both forms, offering the keys shown (the datalist is the limit form's). */
const KeyField: FC = () => (
  <label>
    Key
    <input name="key" class="wide" list="known-keys" autocomplete="off" required pattern="[A-Za-z0-9._:\-]{1,128}" title="letters, digits, '.', '_', ':' or '-'" />
  </label>
);

/**
 * A form that PUTs one of a key's settings (`PUT /v1/queues/:q/keys/:key/<setting>`, the script's
 * `form[data-url]` with `data-fill`: the key typed goes into the URL encoded, `org:7` as
 * `org%3A7`; `body` names the body the script builds from the fields). Saved without a dialog, as
 * a group's limit and rate are; the status says how many parked jobs the change readmitted.
 */
const KeySettingForm: FC<{ queue: string; setting: 'limit' | 'rate'; legend: string; help: string; children: unknown }> = ({ queue: q, setting, legend, help, children }) => (
  <form
    class="inline"
    aria-label={legend}
    data-url={`${paths.api(q, 'keys')}/{key}/${setting}`}
    data-method="PUT"
    data-body={setting}
    data-fill
    data-verb="Save"
    data-done={`Saved the ${setting} of key {key}: {readmitted} parked job(s) readmitted`}
  >
    <fieldset>
      <legend>{legend}</legend>
      <p class="muted">{help}</p>
      <div class="actions">
        {children}
        <button type="submit" data-verb="Save">
          Save
        </button>
      </div>
    </fieldset>
  </form>
);

/** The key's limit on running jobs; the datalist offers the keys shown to both forms. */
const KeyLimitForm: FC<{ queue: string; keys: readonly KeyInfo[] }> = ({ queue: q, keys }) => (
  <KeySettingForm queue={q} setting="limit" legend="Key limit" help="The most running jobs naming the key; empty: no limit. Raising or lifting it readmits parked jobs; lowering it takes nothing back.">
    <KeyField />
    <datalist id="known-keys">
      {keys.map((k) => (
        <option value={k.key} />
      ))}
    </datalist>
    <NumberField label="Limit" name="limit" min={0} value={null} />
  </KeySettingForm>
);

/**
 * The key's rate (the `rate` body: `{limit, periodMs}`, or null when both are empty, which lifts
 * it). A half-filled rate is the API's to refuse (400, told in the alert), so the form does what
 * the route does.
 */
const KeyRateForm: FC<{ queue: string }> = ({ queue: q }) => (
  <KeySettingForm queue={q} setting="rate" legend="Key rate" help="The most starts of the key's jobs in any window of this many ms; both empty: no rate limit. Raising or lifting it readmits parked jobs.">
    <KeyField />
    <NumberField label="Starts" name="limit" min={1} value={null} />
    <label>
      Per ms
      <input name="periodMs" type="number" min="1" max={String(MAX_RATE_MS)} step="1" inputmode="numeric" value="" />
    </label>
  </KeySettingForm>
);

/**
 * The queue page's "Concurrency keys": each key with its limit, running and parked jobs, its rate
 * and, while that rate keeps parked jobs waiting, when the next may start; then the limit and rate
 * forms. Nothing for a queue none of whose jobs named a key (nor a partitioned one: it
 * refuses keys). `total` is how many keys the queue has, `keys` the first KEYS_SHOWN of them.
 */
export const KeysSection: FC<{ queue: string; keys: readonly KeyInfo[]; total: number }> = ({ queue: q, keys, total }) =>
  total === 0 ? null : (
    <>
      <h2 id="keys">Concurrency keys</h2>
      <div class="scroll">
        <table class="cards" aria-label="Concurrency keys">
          <Columns names={['Key', 'Limit', 'Running', 'Parked', 'Rate', 'Throttled until']} numeric={['Limit', 'Running', 'Parked']} />
          <tbody>
            {keys.map((k) => (
              <tr data-key={k.key}>
                <th scope="row">{k.key}</th>
                <td class="num" data-label="Limit">{k.limit ?? '-'}</td>
                <td class="num" data-label="Running">{k.running}</td>
                <td class="num" data-label="Parked">{k.parked}</td>
                <td data-label="Rate">
                  <KeyRate rate={k.rate} />
                </td>
                <td data-label="Throttled until">
                  <Time ms={k.throttledUntil} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {total > keys.length ? (
        <p class="muted">
          The first {keys.length} of {total} keys by name; <code>emq keys {q}</code> lists every one.
        </p>
      ) : null}
      <KeyLimitForm queue={q} keys={keys} />
      <KeyRateForm queue={q} />
    </>
  );

/** The key a pending job was last parked on, and when; undefined when its last event shown is not a park. */
export function parkedOn(job: JobRecord, events: readonly QueueEvent[]): { key: string; at: number } | undefined {
  if (job.state !== 'pending' || job.keys === undefined) return undefined;
  const last = events[events.length - 1];
  return last?.event === 'parked' ? { key: last.key, at: last.time } : undefined;
}

/**
 * At the top of a pending job's page whose last event is a park: the key it waits for. Told from
 * the timeline the page reads anyway (a readmission writes no event, so a job readmitted and not
 * claimed since still shows its park: the sentence says what the last claim found). The park does
 * not say whether the key's limit or its rate held the job, so the sentence names both.
 */
export const ParkedNote: FC<{ parked: { key: string; at: number } | undefined }> = ({ parked }) =>
  parked === undefined ? null : (
    <p class="suspension" data-parked={parked.key}>
      Waiting for key {parked.key}: the last claim to reach this job, at <Time ms={parked.at} />, found the key at its limit or its rate. It goes back to its place in
      its lane when the key has room: a running job of the key ends, its rate lets one more start, or its limit or rate is raised.
    </p>
  );

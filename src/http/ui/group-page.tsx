/** @jsxImportSource hono/jsx */
import type { Child, FC } from 'hono/jsx';
import type { GroupInfo } from '../../queue/groups.js';
import { Action, Columns, NumberField, Part, paths, rateText, StateBadge, Time } from './widgets.js';

/** The groups of a queue page: each with its numbers, linking to its page. */
export const GroupsTable: FC<{ queue: string; groups: readonly GroupInfo[]; more: string | null }> = ({ queue: q, groups, more }) =>
  groups.length === 0 ? (
    <p class="muted">No group: jobs enqueued with a group appear here by it.</p>
  ) : (
    <>
      <div class="scroll">
        <table class="cards" aria-label="Groups">
          <Columns names={['Group', 'State', 'Active', 'Limit', 'Rate', 'Waiting']} numeric={['Active', 'Limit', 'Waiting']} />
          <tbody>
            {groups.map((g) => (
              <tr data-group={g.group}>
                <th scope="row">
                  <a href={paths.group(q, g.group)}>{g.group}</a>
                </th>
                <td data-label="State">{g.paused ? <StateBadge state="paused" /> : g.heldUntil !== null ? <StateBadge state="scheduled" /> : <StateBadge state="running" />}</td>
                <td class="num" data-label="Active">{g.active}</td>
                <td class="num" data-label="Limit">{g.limit ?? '-'}</td>
                <td data-label="Rate">{rateText(g.rate)}</td>
                <td class="num" data-label="Waiting">{g.waiting}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {more === null ? null : (
        <p>
          <a href={paths.queue(q, `?groups=${encodeURIComponent(more)}`)}>More groups</a>
        </p>
      )}
    </>
  );

/**
 * A form that PUTs one setting of a group (the script's `form[data-url]`: its fields as the JSON
 * `body` kind says), named `name`, saved by its Save button.
 */
const SettingForm: FC<{ name: string; url: string; body: 'limit' | 'rate'; done: string; help: string; children?: Child }> = ({ name, url, body, done, help, children }) => (
  <form class="inline" data-url={url} data-method="PUT" data-body={body} data-verb="Save" data-done={done} aria-label={name}>
    <fieldset>
      <legend>{name}</legend>
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

/** A group's page: its numbers, Pause or Resume, and its limit and rate to set (empty lifts them). */
export const GroupPage: FC<{ queue: string; group: GroupInfo }> = ({ queue: q, group: g }) => (
  <Part live={[q]}>
    <p class="crumbs">
      <a href={paths.queues()}>Queues</a> / <a href={paths.queue(q)}>{q}</a> / group {g.group}
    </p>
    <h1>
      Group {g.group} {g.paused ? <StateBadge state="paused" /> : null}
    </h1>
    <dl class="facts">
      <dt>Active</dt>
      <dd data-field="active">{g.active}</dd>
      <dt>Waiting</dt>
      <dd data-field="waiting">{g.waiting}</dd>
      <dt>Limit</dt>
      <dd data-field="limit">{g.limit ?? 'none'}</dd>
      <dt>Rate</dt>
      <dd data-field="rate">{rateText(g.rate)}</dd>
      <dt>Held until</dt>
      <dd>
        <Time ms={g.heldUntil} />
      </dd>
      <dt>Throttled until</dt>
      <dd>
        <Time ms={g.throttledUntil} />
      </dd>
    </dl>
    <div class="actions">
      {g.paused ? (
        <Action id="group-toggle" verb="Resume" url={paths.api(q, 'groups', g.group, 'resume')} confirm={`Resume group ${g.group}? Its jobs start again.`} done={`Resumed group ${g.group}`} />
      ) : (
        <Action id="group-toggle" verb="Pause" url={paths.api(q, 'groups', g.group, 'pause')} confirm={`Pause group ${g.group}? None of its jobs starts until it is resumed; what runs finishes.`} done={`Paused group ${g.group}`} />
      )}
    </div>
    <SettingForm name="Limit" url={paths.api(q, 'groups', g.group, 'limit')} body="limit" done={`Saved the limit of ${g.group}`} help="The most jobs of this group active at once; empty: no limit.">
      <NumberField label="Limit" name="limit" min={0} value={g.limit} />
    </SettingForm>
    <SettingForm name="Rate" url={paths.api(q, 'groups', g.group, 'rate')} body="rate" done={`Saved the rate of ${g.group}`} help="At most this many starts in any window of this many ms; both empty: no rate limit.">
      <NumberField label="Starts" name="limit" min={1} value={g.rate?.limit ?? null} />
      <NumberField label="Per ms" name="periodMs" min={1} value={g.rate?.periodMs ?? null} />
    </SettingForm>
  </Part>
);

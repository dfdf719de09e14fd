/**
 * The dashboard's stylesheet (`/ui/app.css`): plain CSS, no build step, light and dark by the
 * system's setting, readable at 360 px wide (tables scroll inside their own box, never the page).
 * Every state has a colour and its word: the colour is never the only signal.
 */
export const DASHBOARD_CSS = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1b1f24; --muted: #59636e; --line: #d1d9e0; --panel: #f6f8fa;
  --accent: #0b5cad; --pending: #0b5cad; --scheduled: #6f42c1; --active: #9a6700; --waiting: #0f766e;
  --completed: #1a7f37; --dead: #cf222e; --paused: #59636e; --focus: #e36209; --awaiting: #a3246f; --cancelled: #6e5b48; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --panel: #151b23;
  --accent: #4493f8; --pending: #4493f8; --scheduled: #ab7df8; --active: #d29922; --waiting: #2dd4bf;
  --completed: #3fb950; --dead: #f85149; --paused: #9198a1; --awaiting: #e57bb8; --cancelled: #b8a48c; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: var(--bg); padding: 4px 8px; z-index: 2; }
header { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; justify-content: space-between; padding: 10px 16px; border-bottom: 1px solid var(--line); background: var(--panel); }
header nav { display: flex; gap: 14px; align-items: baseline; flex-wrap: wrap; }
header .brand { font-weight: 700; color: var(--fg); text-decoration: none; }
main { padding: 12px 16px 32px; max-width: 1200px; }
h1 { font-size: 1.35rem; margin: 6px 0 10px; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 22px 0 8px; }
p { margin: 6px 0; }
.muted { color: var(--muted); }
caption.note { caption-side: bottom; text-align: left; padding: 6px 10px; color: var(--muted); font-size: .85em; }
.crumbs { margin: 4px 0; color: var(--muted); overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
td.wrap { white-space: normal; overflow-wrap: anywhere; min-width: 12ch; }
th { font-weight: 600; }
thead th { background: var(--panel); }
tr:last-child > * { border-bottom: 0; }
td.num, th.num { text-align: right; }
.state { display: inline-block; padding: 0 7px; border-radius: 10px; border: 1px solid currentColor; font-size: .85em; font-weight: 600; }
.state-pending { color: var(--pending); } .state-scheduled { color: var(--scheduled); } .state-active { color: var(--active); }
.state-waiting { color: var(--waiting); } .state-completed { color: var(--completed); } .state-dead { color: var(--dead); }
.state-paused { color: var(--paused); } .state-running { color: var(--completed); } .state-awaiting { color: var(--awaiting); }
/* dashed as well as its colour: ended, neither done nor failed */
.state-cancelled { color: var(--cancelled); border-style: dashed; }
.step-done { color: var(--completed); } .step-failed { color: var(--dead); } .step-sleeping { color: var(--scheduled); }
.step-waiting { color: var(--awaiting); } .step-timed-out { color: var(--active); } .step-invoking { color: var(--waiting); }
.suspension { margin: 8px 0; padding: 6px 10px; border-left: 4px solid var(--focus); background: var(--panel); overflow-wrap: anywhere; }
table.steps tr.current > * { background: var(--panel); }
table.steps tr.current > :first-child { box-shadow: inset 4px 0 0 var(--focus); }
table.steps th[scope="row"] { min-width: 10ch; }
table.steps time, .suspension time { white-space: nowrap; }
.suspension[data-cancel] { border-left-color: var(--cancelled); }
.suspension[data-parked] { border-left-color: var(--pending); }
/* nine counts and an hour's chart: a long queue name wraps, so the row fits a laptop's width */
table.counts th[scope="row"] { white-space: normal; overflow-wrap: anywhere; min-width: 12ch; }
table.counts th.num, table.counts td.num { padding-left: 6px; padding-right: 6px; }
/* nine state names over short numbers: headings a size down keep the row within 1200 px */
table.counts thead th { font-size: .85em; }
code { font-size: .92em; overflow-wrap: anywhere; }
.tabs { display: flex; flex-wrap: wrap; gap: 6px; margin: 8px 0; padding: 0; list-style: none; }
.tabs a { display: inline-block; padding: 3px 10px; border: 1px solid var(--line); border-radius: 14px; text-decoration: none; }
.tabs a[aria-current="page"] { background: var(--accent); border-color: var(--accent); color: var(--bg); }
.actions { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 8px 0; }
td .actions { margin: 0; }
button { font: inherit; padding: 4px 12px; border-radius: 6px; border: 1px solid var(--line); background: var(--panel); color: var(--fg); cursor: pointer; }
button:hover { border-color: var(--accent); }
button.danger { color: var(--dead); }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--bg); }
form.inline { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin: 8px 0; }
label { display: flex; flex-direction: column; gap: 2px; font-size: .9em; }
input { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); min-width: 0; width: 12ch; }
input.wide { width: 22ch; }
textarea { font: .9em/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; padding: 4px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); width: 100%; min-width: 0; resize: vertical; }
.fields { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: start; }
.fields .grow { flex: 1 1 24ch; }
form.send-event { max-width: 760px; }
/* Cancel's reason and button in the row of the job's actions, the buttons on the field's line */
.job-actions { align-items: flex-end; }
.job-actions form.inline { margin: 0; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 10px 0; padding: 6px 12px; }
legend { font-weight: 600; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 8px 0; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; overflow-x: auto; max-height: 24em; margin: 6px 0; font-size: .88em; }
.chart { display: block; }
.legend .chart { display: inline-block; vertical-align: middle; }
.chart .c { fill: var(--completed); } .chart .d { fill: var(--dead); } .chart .base { stroke: var(--line); }
.legend { font-size: .85em; color: var(--muted); }
#status, #alert { margin: 0 16px; }
#status:not(:empty) { margin-top: 10px; padding: 6px 10px; border-left: 4px solid var(--completed); background: var(--panel); }
#alert:not(:empty) { margin-top: 10px; padding: 6px 10px; border-left: 4px solid var(--dead); background: var(--panel); }
dialog { border: 1px solid var(--line); border-radius: 8px; padding: 16px; max-width: min(92vw, 460px); background: var(--bg); color: var(--fg); }
dialog::backdrop { background: rgb(0 0 0 / .4); }
dialog .actions { justify-content: flex-end; margin-bottom: 0; }
.signin { max-width: 420px; }
.signin input { width: 100%; }
.pager { display: flex; gap: 16px; margin: 8px 0; }
/* narrow screens: a table of class cards shows each row as a card, each cell named by its data-label */
@media (max-width: 640px) {
  table.cards thead { position: absolute; left: -9999px; }
  table.cards, table.cards tbody, table.cards tr { display: block; width: 100%; }
  /* a column, so a caption (the counts' note) spans the width, below the rows as on a wide screen */
  table.cards { display: flex; flex-direction: column; }
  table.cards caption { display: block; order: 1; }
  table.cards tr { padding: 6px 0; border-bottom: 1px solid var(--line); }
  table.cards tr:last-child { border-bottom: 0; }
  table.cards th, table.cards td { display: block; border: 0; padding: 2px 10px; white-space: normal; text-align: left; overflow-wrap: anywhere; }
  table.cards td.num { display: inline-block; padding-right: 4px; }
  table.cards td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  table.cards td:empty { display: none; }
  table.steps tr.current { background: var(--panel); box-shadow: inset 4px 0 0 var(--focus); }
  table.steps tr.current > * { background: none; box-shadow: none; }
}
`;

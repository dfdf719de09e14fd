/** @jsxImportSource hono/jsx */
import type { FC } from 'hono/jsx';

/** A minute's bars are this wide, and the chart this high, in px. */
const BAR = 4;
const HEIGHT = 36;

/**
 * The last hour of a queue as an SVG bar chart: one bar a minute, oldest left, the jobs completed
 * in it (green) with those sent to dead on top (red); its text alternative gives the totals.
 */
export const HourChart: FC<{ completed: readonly number[]; dead: readonly number[] }> = ({ completed, dead }) => {
  const minutes = completed.length;
  const peak = Math.max(1, ...completed.map((c, i) => c + (dead[i] ?? 0)));
  const scale = (n: number): number => (n === 0 ? 0 : Math.max(1, Math.round((n / peak) * HEIGHT)));
  const done = completed.reduce((a, b) => a + b, 0);
  const died = dead.reduce((a, b) => a + b, 0);
  const label = `Last hour: ${done} completed, ${died} dead; busiest minute ${peak === 1 && done + died === 0 ? 0 : peak} jobs`;
  return (
    <svg class="chart" width={minutes * BAR} height={HEIGHT + 1} viewBox={`0 0 ${minutes * BAR} ${HEIGHT + 1}`} role="img" aria-label={label}>
      <title>{label}</title>
      <line class="base" x1="0" y1={HEIGHT + 0.5} x2={minutes * BAR} y2={HEIGHT + 0.5} />
      {completed.map((c, i) => {
        const d = dead[i] ?? 0;
        const hc = scale(c);
        const hd = scale(d);
        return (
          <g>
            {hc > 0 ? <rect class="c" x={i * BAR} y={HEIGHT - hc} width={BAR - 1} height={hc} /> : null}
            {hd > 0 ? <rect class="d" x={i * BAR} y={HEIGHT - hc - hd} width={BAR - 1} height={hd} /> : null}
          </g>
        );
      })}
    </svg>
  );
};

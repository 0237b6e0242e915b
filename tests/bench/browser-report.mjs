// The markdown of tests/bench/browser.mjs: every build's rows against its own idle page, the issue's
// targets met or not, the builds side by side, and where the main thread's time went.
import { ms } from './probe.mjs';
import { profileTable } from './profile.mjs';

const ratio = (a, b) => (b > 0 && Number.isFinite(a) ? a / b : NaN);
const x = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '–');
const lat = (l) => (l.n ? `${ms(l.p50)} / ${ms(l.p95)} (${l.n})` : '–');

/** Whether `row`'s figures `r` (with `idle`, the same build's idle row) meet its targets; null: none. */
export function verdict(row, r, idle) {
  const checks = [];
  if (row.p95Ratio) checks.push(ratio(r.p95, idle.p95) <= row.p95Ratio);
  if (row.longestMs) checks.push(r.longestTask <= row.longestMs);
  if (row.escMs) checks.push(r.esc.n > 0 && r.esc.p95 <= row.escMs);
  return checks.length ? checks.every(Boolean) : null;
}

function target(row) {
  const parts = [];
  if (row.p95Ratio) parts.push(`p95 ≤ ${row.p95Ratio}× idle`);
  if (row.longestMs) parts.push(`no task > ${row.longestMs} ms`);
  if (row.escMs) parts.push(`Esc ≤ ${row.escMs} ms (p95)`);
  return parts.join(', ') || '–';
}

function table(rows, build) {
  const idle = build.rows[0];
  return [
    '| row | stream ms | frames | p50 frame | p95 frame | max frame | long tasks > 50 / > 100 ms | longest task | key → paint p50 / p95 (n) | Esc → cancelled painted p50 / p95 (n) | p95 ÷ idle p95 | target | met |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...rows.map((row, i) => {
      const r = build.rows[i];
      const met = verdict(row, r, idle);
      return `| ${row.name} | ${row.rate ? r.streamMs : '–'} | ${r.frames} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.max)} `
        + `| ${r.longTasks} / ${r.over100} | ${ms(r.longestTask)} | ${lat(r.key)} | ${lat(r.esc)} `
        + `| ${i === 0 ? '1' : x(ratio(r.p95, idle.p95))} | ${target(row)} | ${met === null ? '–' : met ? 'yes' : '**no**'} |`;
    }),
  ].join('\n');
}

function sideBySide(rows, ours, theirs) {
  return [
    `This build / ${theirs.name}:`,
    '',
    '| row | p95 frame | p95 ÷ idle | long tasks > 50 ms | longest task | key → paint p95 | Esc p95 |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((row, i) => {
      const [a, b] = [ours.rows[i], theirs.rows[i]];
      const [ia, ib] = [ours.rows[0], theirs.rows[0]];
      return `| ${row.name} | ${ms(a.p95)} / ${ms(b.p95)} | ${x(ratio(a.p95, ia.p95))} / ${x(ratio(b.p95, ib.p95))} `
        + `| ${a.longTasks} / ${b.longTasks} | ${ms(a.longestTask)} / ${ms(b.longestTask)} `
        + `| ${ms(a.key.p95)} / ${ms(b.key.p95)} | ${ms(a.esc.p95)} / ${ms(b.esc.p95)} |`;
    }),
  ].join('\n');
}

/** The whole report. */
export function report({ rows, builds, profileRuns, machine, load, runs, escPerRow, idleMs, keyEveryMs, baseline }) {
  const [ours, ...others] = builds;
  const profiled = rows.find((r) => r.profile);
  const loads = `${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} (1-minute load average, sampled between runs)`;
  return `# Browser: streams painting into the editor and the previews, against the idle page

Machine: ${machine}, headless Chromium (software rendering). Load while it ran: ${loads}.
Date: ${new Date().toISOString()}. Command: \`cargo xtask bench browser${baseline ? ' --baseline REV' : ''}\` (runs \`node tests/bench/browser.mjs --out bench/browser.md\`${baseline ? `, \`FLINT_BENCH_BASELINE=${baseline}\`` : ''}).
The scripted upstream streams tests/fixtures/large.md (8,192 tokens) into every tile. ${runs} runs per row and build,
${baseline ? 'the builds alternating run by run, ' : ''}frames pooled. The idle page (editor ready, nothing streaming, ${idleMs} ms) is measured in
the same run; every row's p95 is given as a ratio to its own build's idle p95. While each row runs a key is typed
into the prompt box every ${keyEveryMs} ms: "key → paint" is from the key's event time to the end of the next frame
(so time queued behind a long task counts). "Esc → cancelled painted": Escape pressed a quarter of the way into a
stream (${escPerRow} streams per row and build, separate from the frame runs), until the end of the first frame whose
status reads "cancelled". Times in ms.

Issue 15's targets: one stream at 10k tok/s p95 frame ≤ 1.25× idle and no long task over 50 ms; ten tiles × 5k tok/s
p95 ≤ 2× idle and none over 100 ms; Esc painted within 50 ms at every rate.

## ${ours.name}

${table(rows, ours)}
${others.map((theirs) => `
## ${theirs.name}, measured in the same run

${table(rows, theirs)}

### Side by side

${sideBySide(rows, ours, theirs)}
`).join('')}
${profiled && profileRuns ? `## Where the time goes: ${profiled.name}

A CPU profile of the page's main thread (CDP \`Profiler\`, sampled every 250 µs) over ${profileRuns} further streams per
build (not part of the frame figures above: sampling slows the page). Self time per function, summed and divided by
the number of streams. The preview frames' morphs run in their own renderer when Chromium isolates sandboxed frames
and are then not in this profile (their cost reaches the app as \`applied\` times).

### ${ours.name}

${profileTable(ours.profile, profileRuns)}
${others.map((theirs) => `
### ${theirs.name}

${profileTable(theirs.profile, profileRuns)}
`).join('')}` : ''}`;
}

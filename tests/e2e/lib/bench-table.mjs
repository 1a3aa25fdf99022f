// The one bench table: reads the JSON lines every benchmark appended to
// $BENCH_OUT (`tests/src/bench.rs`, `lib/bench.mjs`) and prints them as one
// markdown table. With `--readme FILE` it also replaces the part of FILE
// between `<!-- bench-table:start -->` and `<!-- bench-table:end -->`.
//
//   node tests/e2e/lib/bench-table.mjs RESULTS.jsonl [--readme README.md]
import fs from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { round } from './bench.mjs';

const START = '<!-- bench-table:start -->';
const END = '<!-- bench-table:end -->';

export function table(rows) {
  const v = (x) => (x === null || x === undefined ? '' : String(round(x)));
  const goal = (r) =>
    r.goal ? `${r.goal.on === 'p90' ? 'p90 ' : ''}${r.goal.max !== undefined ? '≤' : '≥'} ${r.goal.max ?? r.goal.min}` : '';
  const result = (r) => (r.pass === null || r.pass === undefined ? '' : r.pass ? 'met' : '**missed**');
  const lines = [
    '| | figure | median | p90 | unit | goal | | notes |',
    '|---|---|---:|---:|---|---|---|---|',
  ];
  for (const r of rows) {
    const note = String(r.note ?? '').replaceAll('|', '\\|');
    lines.push(`| ${r.group} | ${r.figure.replaceAll('|', '\\|')} | ${v(r.median)} | ${v(r.p90)} | ${r.unit} | ${goal(r)} | ${result(r)} | ${note} |`);
  }
  return lines.join('\n');
}

function machine() {
  const cpu = os.cpus()[0]?.model?.trim() ?? 'unknown CPU';
  const gib = Math.round(os.totalmem() / 2 ** 30);
  return `${os.cpus().length} cores (${cpu}), ${gib} GiB, ${os.type()} ${os.release()}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [results, flag, readme] = process.argv.slice(2);
  if (!results) {
    console.error('usage: bench-table.mjs RESULTS.jsonl [--readme README.md]');
    process.exit(2);
  }
  const rows = fs
    .readFileSync(results, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const date = new Date().toISOString().slice(0, 10);
  const text = `${table(rows)}\n\nMeasured ${date} on ${machine()}; every ratio within one run.`;
  console.log(text);
  if (flag === '--readme') {
    const doc = fs.readFileSync(readme, 'utf8');
    const a = doc.indexOf(START);
    const b = doc.indexOf(END);
    if (a < 0 || b < a) throw new Error(`${readme} has no ${START} … ${END} section`);
    fs.writeFileSync(readme, `${doc.slice(0, a + START.length)}\n${text}\n${doc.slice(b)}`);
    console.log(`\n(written to ${readme})`);
  }
  const missed = rows.filter((r) => r.pass === false).length;
  if (missed) console.log(`\n${missed} of ${rows.filter((r) => r.pass !== null).length} goals missed`);
}

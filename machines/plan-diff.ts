import type { TrackedFile } from './pulse-files.js';

/** The plan as pulse saw it at one moment: its hash, and its text when it is small enough to compare. */
export interface PlanSnapshot {
  sha256: string | null;
  /** The text; null when plan.md is absent or over `PLAN_TEXT_LIMIT` (then only the hash is compared). */
  text: string | null;
  size: number | null;
  /** Set when pulse had no reading of the plan at that moment (nothing to compare with). */
  unknown?: true;
}

/** Plans over this are compared by hash only and summarised, never diffed. */
export const PLAN_TEXT_LIMIT = 64 * 1024;

/** A plan pulse knows nothing of (an event that carried none). */
export const UNKNOWN_PLAN: PlanSnapshot = { sha256: null, text: null, size: null, unknown: true };

/** The plan.md the log tracks, as a snapshot: its text only when whole and within the limit. */
export const planSnapshot = (file: TrackedFile): PlanSnapshot => ({
  sha256: file.sha256,
  text: file.truncated || (file.size ?? 0) > PLAN_TEXT_LIMIT ? null : file.text,
  size: file.size,
});

/** What became of the plan between a change and an ack, in numbers, in words and as a bounded unified diff. */
export interface PlanChange {
  changed: boolean;
  added: number;
  removed: number;
  /** A unified diff of plan.md, cut past `DIFF_LIMIT` characters; null when unchanged or not comparable by text. */
  diff: string | null;
  /** One plain sentence: "acknowledged without changing the plan", "the plan changed: 2 lines added, 1 removed", … */
  summary: string;
}

/** The sentence an ack with the plan untouched gets, everywhere it is shown. */
export const UNCHANGED_PLAN = 'acknowledged without changing the plan';

/** A diff is cut past this many characters (with a line saying how much more there was). */
export const DIFF_LIMIT = 8 * 1024;
/** Past this many edits the plans are shown as rewritten, all of one then all of the other. */
const MAX_EDITS = 1000;
/** Lines of context around each change. */
const CONTEXT = 3;

type Op = 'equal' | 'delete' | 'insert';

const linesOf = (text: string): string[] => {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
};

/**
 * The shortest edit script from `a` to `b` (Myers' O(ND) algorithm), or null past `maxEdits`
 * edits. Keeps only each round's diagonals in play, so memory grows with the edits, not the lines.
 */
const editScript = (a: readonly string[], b: readonly string[], maxEdits: number): Op[] | null => {
  const n = a.length;
  const m = b.length;
  const limit = Math.min(n + m, maxEdits);
  const offset = limit + 1;
  const v = new Int32Array(2 * limit + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= limit && found < 0; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x =
        d === 0
          ? 0
          : k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
            ? v[offset + k + 1]!
            : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) found = d;
    }
    trace.push(v.slice(offset - d, offset + d + 1));
  }
  if (found < 0) return null;
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const previous = trace[d - 1]!;
    const at = (k: number) => previous[k + d - 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const previousK = down ? k + 1 : k - 1;
    const previousX = at(previousK);
    const previousY = previousX - previousK;
    while (x > previousX && y > previousY) {
      ops.push('equal');
      x--;
      y--;
    }
    ops.push(down ? 'insert' : 'delete');
    x = previousX;
    y = previousY;
  }
  while (x > 0 && y > 0) {
    ops.push('equal');
    x--;
    y--;
  }
  return ops.reverse();
};

/** The unified diff's hunks of an edit script, `CONTEXT` lines around each change. */
const hunks = (a: readonly string[], b: readonly string[], ops: readonly Op[]): string[] => {
  const out: string[] = [];
  const changes: number[] = [];
  for (let i = 0; i < ops.length; i++) if (ops[i] !== 'equal') changes.push(i);
  // Each op's line in a and in b (1-based), for hunk headers.
  const lineA: number[] = [];
  const lineB: number[] = [];
  let ai = 0;
  let bi = 0;
  for (const op of ops) {
    lineA.push(ai);
    lineB.push(bi);
    if (op !== 'insert') ai++;
    if (op !== 'delete') bi++;
  }
  let i = 0;
  while (i < changes.length) {
    const start = Math.max(0, changes[i]! - CONTEXT);
    let end = Math.min(ops.length, changes[i]! + CONTEXT + 1);
    while (i + 1 < changes.length && changes[i + 1]! - CONTEXT <= end) {
      i++;
      end = Math.min(ops.length, changes[i]! + CONTEXT + 1);
    }
    i++;
    const body: string[] = [];
    let fromA = 0;
    let fromB = 0;
    for (let j = start; j < end; j++) {
      const op = ops[j]!;
      if (op === 'equal') body.push(` ${a[lineA[j]!]}`);
      else if (op === 'delete') body.push(`-${a[lineA[j]!]}`);
      else body.push(`+${b[lineB[j]!]}`);
      if (op !== 'insert') fromA++;
      if (op !== 'delete') fromB++;
    }
    const range = (first: number, count: number) => `${count === 0 ? first : first + 1},${count}`;
    out.push(`@@ -${range(lineA[start]!, fromA)} +${range(lineB[start]!, fromB)} @@`, ...body);
  }
  return out;
};

/** The diff text cut at `DIFF_LIMIT` characters on a line's end, saying how many lines were left out. */
const bounded = (lines: readonly string[]): string => {
  const kept: string[] = [];
  let size = 0;
  for (const [index, line] of lines.entries()) {
    if (size + line.length + 1 > DIFF_LIMIT) {
      kept.push(`… ${lines.length - index} more lines of the diff: read .pulse/plan.md`);
      break;
    }
    kept.push(line);
    size += line.length + 1;
  }
  return kept.join('\n');
};

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

/**
 * What became of the plan from `before` (when the change was logged) to `after` (at the ack):
 * unchanged when the hashes match; else a unified diff when both texts are known, or a sentence
 * when one is over `PLAN_TEXT_LIMIT` or unknown.
 */
export const planChange = (before: PlanSnapshot, after: PlanSnapshot): PlanChange => {
  if (before.unknown || after.unknown)
    return {
      changed: true,
      added: 0,
      removed: 0,
      diff: null,
      summary:
        'pulse had no reading of the plan at the change, so it cannot say what changed: read .pulse/plan.md',
    };
  if (before.sha256 === after.sha256)
    return { changed: false, added: 0, removed: 0, diff: null, summary: UNCHANGED_PLAN };
  if (after.sha256 === null)
    return {
      changed: true,
      added: 0,
      removed: 0,
      diff: null,
      summary: 'the plan changed: plan.md was deleted',
    };
  const known = (plan: PlanSnapshot) => plan.sha256 === null || plan.text !== null;
  if (!known(before) || !known(after)) {
    const big = [before, after].some((plan) => (plan.size ?? 0) > PLAN_TEXT_LIMIT);
    return {
      changed: true,
      added: 0,
      removed: 0,
      diff: null,
      summary: big
        ? `the plan changed (it is over ${PLAN_TEXT_LIMIT / 1024} KiB, so pulse shows no diff: read .pulse/plan.md)`
        : 'the plan changed (pulse did not see the plan at the change, so it shows no diff: read .pulse/plan.md)',
    };
  }
  const a = linesOf(before.text ?? '');
  const b = linesOf(after.text ?? '');
  const ops = editScript(a, b, MAX_EDITS) ?? ([...a.map(() => 'delete'), ...b.map(() => 'insert')] as Op[]);
  const added = ops.filter((op) => op === 'insert').length;
  const removed = ops.filter((op) => op === 'delete').length;
  const lines = ['--- plan.md at the change', '+++ plan.md at the ack', ...hunks(a, b, ops)];
  return {
    changed: true,
    added,
    removed,
    diff: bounded(lines),
    summary:
      added + removed === 0
        ? 'the plan changed in its bytes only (line endings or a final newline)'
        : `the plan changed: ${count(added, 'line')} added, ${removed} removed`,
  };
};

/** Output lines a replica keeps for explaining its exit. */
export const KEPT_LINES = 20;

const NOISE = /^(Node\.js v\d|\s+at\s|\s*\^+\s*$|\s*$)/;
const ERRORISH = /(error|exception|cannot|not found|no such|denied|refused|fatal|panic|traceback|missing)/i;

/**
 * One line saying why a replica process exited, for callers of a crash-looping function: the
 * exit status, then the last error-like line of its output (else the last meaningful line).
 * Pure: `lines` are the process's last output lines, oldest first.
 */
export function summarizeExit(lines: readonly string[], code: number | null, signal: string | null): string {
  const status = `exited (${signal ?? `status ${code}`})`;
  const meaningful = lines.map((l) => l.trimEnd()).filter((l) => !NOISE.test(l));
  const pick = [...meaningful].reverse().find((l) => ERRORISH.test(l)) ?? meaningful[meaningful.length - 1];
  return pick ? `${status}: ${pick.trim().slice(0, 500)}` : status;
}

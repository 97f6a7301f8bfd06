/** RFC 3339 date-time (`2024-05-01T12:00:00Z`, `…T12:00:00.5+02:00`), strictly: no other format Date accepts. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;

const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

/**
 * Epoch ms of an RFC 3339 time, or undefined when `s` is not one or names no real instant
 * (month 13, February 31st, hour 24, offset +25:00). Leap seconds (`:60`) are not accepted.
 */
export function parseRfc3339(s: string): number | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || sec > 59) return undefined;
  if (m[9] && (Number(m[10]) > 23 || Number(m[11]) > 59)) return undefined;
  const t = Date.parse(s.toUpperCase());
  return Number.isFinite(t) ? t : undefined;
}

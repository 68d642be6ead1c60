/**
 * Durations as ntfy reads them: Go's `time.ParseDuration` syntax (`10m`, `1h30m`, `1.5h`,
 * `100ms`, `-30s`, `0`), which `since=` and ntfy's own settings use, plus `d` for days, which Go
 * lacks but people type (UPF accepts it too).
 */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** One `<number><unit>` term; units are tried longest first so `ms` is not read as `m` + `s`. */
const TERM = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h|d)/;

/** Milliseconds of a Go duration (fractions kept), or null when it is not one. */
export function parseGoDuration(text: string): number | null {
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') return null;
  let total = 0;
  while (rest !== '') {
    const match = TERM.exec(rest);
    if (!match?.[1] || !match[2]) return null;
    total += Number(match[1]) * (UNIT_MS[match[2]] as number);
    rest = rest.slice(match[0].length);
  }
  return Number.isFinite(total) ? sign * total : null;
}

/** A configured duration: whole seconds (`43200`) or a Go duration (`12h`); null when neither. */
export function parseConfigDuration(text: string): number | null {
  const trimmed = text.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  return parseGoDuration(trimmed);
}

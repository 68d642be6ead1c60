// Small display helpers shared by the pages.
export function ago(iso, nowMs = Date.now()) {
  if (!iso) return 'never';
  const seconds = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

export function when(iso) {
  return iso ? new Date(iso).toLocaleString() : '—';
}

export function number(n) {
  return typeof n === 'number' ? n.toLocaleString() : '—';
}

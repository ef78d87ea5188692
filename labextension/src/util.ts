/**
 * Small helpers shared by the extension's parts: JSON checks and the one way errors are
 * reported (console.warn: nothing here may throw into JupyterLab or spam console.error).
 */

/** The MIME type of the output a `%%fuxi` cell shows its session record in. */
export const RECORD_MIME = 'application/vnd.fuxi.session.v1+json';

/** The metadata key the record is mirrored into. */
export const METADATA_KEY = 'fuxi';

export type JSONObject = { [key: string]: unknown };

export function isObject(value: unknown): value is JSONObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep JSON equality (keys whose value is undefined count as absent). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) {
    return true;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, index) => jsonEqual(item, b[index]))
    );
  }
  if (!isObject(a) || !isObject(b)) {
    return false;
  }
  const keys = Object.keys(a).filter(key => a[key] !== undefined);
  const other = Object.keys(b).filter(key => b[key] !== undefined);
  return (
    keys.length === other.length &&
    keys.every(key => b[key] !== undefined && jsonEqual(a[key], b[key]))
  );
}

/** A JSON copy of `value` (metadata must not alias an output's data). */
export function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export function warn(what: string, error?: unknown): void {
  console.warn(`fuxi-notebook: ${what}`, error ?? '');
}

/** `fn`, with any error caught and reported with console.warn. */
export function guarded<A extends unknown[]>(
  what: string,
  fn: (...args: A) => void
): (...args: A) => void {
  return (...args: A) => {
    try {
      fn(...args);
    } catch (error) {
      warn(what, error);
    }
  };
}

function normalPath(path: string): string {
  return path.replace(/\\/g, '/').replace(/^\/+/, '');
}

/**
 * How well `asked` (the notebook path the kernel believes) names `path` (a notebook's
 * path relative to the server root): 0 not at all; the same path (tolerant of a leading
 * `/`) best; else an absolute path ending in it (what JupyterLab gives the kernel as
 * JPY_SESSION_NAME), the longer the better.
 */
export function pathMatch(asked: string, path: string): number {
  const a = normalPath(asked);
  const p = normalPath(path);
  if (!p) {
    return 0;
  }
  if (a === p) {
    return Number.MAX_SAFE_INTEGER;
  }
  return a.endsWith(`/${p}`) ? p.length : 0;
}

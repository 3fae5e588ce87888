/**
 * Matching of a request's host and port against a task's network allow-list. Entries: `example.com` (ports 80 and
 * 443), `example.com:8443` (that port only), `*.pypi.org` (any subdomain, not the apex, ports 80 and 443),
 * `127.0.0.1:8080`, `[::1]:8080`, and `*` (any host, any port: lenient mode's list; the proxy still refuses host-only
 * addresses). Hosts compare case-insensitively.
 */

/** The entry that allows any host on any port. */
export const ANY_HOST = '*';

interface Entry {
  host: string;
  wildcard: boolean;
  port: number | null;
}

function parseEntry(raw: string): Entry {
  let text = raw.trim().toLowerCase();
  let port: number | null = null;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracket) {
    return { host: bracket[1] ?? '', wildcard: false, port: bracket[2] ? Number(bracket[2]) : null };
  }
  const colon = text.lastIndexOf(':');
  if (colon > 0 && text.indexOf(':') === colon) {
    port = Number(text.slice(colon + 1));
    text = text.slice(0, colon);
  }
  const wildcard = text.startsWith('*.');
  return { host: wildcard ? text.slice(2) : text, wildcard, port };
}

/**
 * @example
 * const allowed = makeAllowList(['*.pypi.org', '127.0.0.1:8080']);
 * allowed('files.pypi.org', 443); // true
 */
export function makeAllowList(entries: readonly string[]): (host: string, port: number) => boolean {
  if (entries.some((e) => e.trim() === ANY_HOST)) return () => true;
  const parsed = entries.map(parseEntry);
  return (rawHost, port) => {
    const host = rawHost.toLowerCase().replace(/^\[|\]$/g, '');
    return parsed.some((e) => {
      const hostOk = e.wildcard ? host.endsWith(`.${e.host}`) : host === e.host;
      const portOk = e.port === null ? port === 80 || port === 443 : port === e.port;
      return hostOk && portOk;
    });
  };
}

/**
 * Headless Chromium for console tests: Debian's `/usr/bin/chromium` (or `CHROMIUM_PATH`) driven by playwright-core,
 * one browser per test file. `useBrowser()` at the top of a file launches it before the file's tests and closes it
 * after; `open(url)` gives a fresh page (its own context, so its own sessionStorage) that records everything that went
 * wrong on it: uncaught page errors, console errors, requests that failed on the network, and responses with an
 * error status. After each test, a page opened during it fails the test on any uncaught page error (an exception in
 * the console's code is never fine); `expectClean(page)` is the stricter check a test calls itself (no console
 * errors, no failed requests except the statuses it expects, e.g. the 403 of a bad key).
 *
 * @example
 * const browser = useBrowser();
 * it('loads the overview', async () => {
 *   const page = await browser.open(`${rt.url}/`, { apiKey: rt.apiKey });
 *   await page.page.getByRole('heading', { name: 'Overview' }).waitFor();
 *   expectClean(page);
 * });
 */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { API_KEY_STORAGE } from '../../lib/console/web/session.ts';

/** Where Chromium is: `CHROMIUM_PATH`, else Debian's package. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CHROMIUM_PATH || '/usr/bin/chromium';
}

/** One page and what went wrong on it so far. */
export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Uncaught exceptions in the page (`pageerror`). */
  pageErrors: string[];
  /** `console.error` messages (Chromium's own "Failed to load resource" lines are in `failedRequests` instead). */
  consoleErrors: string[];
  /** `METHOD url → status` for error responses, `METHOD url ✗ reason` for network failures. */
  failedRequests: Array<{ method: string; url: string; status?: number; reason?: string }>;
  /** Sets the console's API key in this page's sessionStorage (for every later load of the page's origin). */
  signIn(apiKey: string): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Signed in before the first load (the key is in sessionStorage when the console's code runs). */
  apiKey?: string;
  viewport?: { width: number; height: number };
}

export interface TestBrowser {
  /** The launched browser (after `beforeAll`). */
  readonly browser: Browser;
  /** A fresh page in its own context, loading `url` when given (waits for the `load` event). */
  open(url?: string, options?: OpenOptions): Promise<ConsolePage>;
}

/** Launches headless Chromium with the flags a root container needs. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // We run as root in a container: no sandbox; /dev/shm is small there.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--no-default-browser-check'],
  });
}

/** Opens a recording page in a new context of `browser`. */
export async function openConsolePage(browser: Browser, url?: string, options: OpenOptions = {}): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 } });
  const page = await context.newPage();
  // Under vitest's 30 s test timeout: a step that waits in vain fails naming its locator, not as a bare timeout.
  page.setDefaultTimeout(15_000);
  const recorded: ConsolePage = {
    page,
    context,
    pageErrors: [],
    consoleErrors: [],
    failedRequests: [],
    async signIn(apiKey: string) {
      // An init script runs before any of the page's scripts on every load: the console starts signed in.
      await context.addInitScript(
        ([name, key]) => {
          // about:blank and data: URLs have no storage; only the console's origin needs the key.
          try {
            globalThis.sessionStorage.setItem(name, key);
          } catch {
            // no storage on this document
          }
        },
        [API_KEY_STORAGE, apiKey] as const,
      );
    },
    async close() {
      await context.close();
    },
  };
  page.on('pageerror', (error) => recorded.pageErrors.push(error.stack ?? error.message));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium logs every error response as a console error too; responses are recorded with their URL below.
    if (message.text().startsWith('Failed to load resource')) return;
    recorded.consoleErrors.push(message.text());
  });
  page.on('requestfailed', (request) => {
    recorded.failedRequests.push({ method: request.method(), url: request.url(), reason: request.failure()?.errorText ?? 'failed' });
  });
  page.on('response', (response) => {
    if (response.status() >= 400) recorded.failedRequests.push({ method: response.request().method(), url: response.url(), status: response.status() });
  });
  if (options.apiKey !== undefined) await recorded.signIn(options.apiKey);
  if (url !== undefined) await page.goto(url, { waitUntil: 'load' });
  return recorded;
}

export type FailedRequest = ConsolePage['failedRequests'][number];

export interface CleanOptions {
  /** Error statuses the test expects (the 403 of a bad key). */
  allowStatuses?: number[];
  /** Other expected failures, one request at a time. */
  allow?: (request: FailedRequest) => boolean;
}

/** What went wrong on `page`, one line each (empty when nothing did), less what `options` expects. */
export function pageProblems(page: ConsolePage, options: CleanOptions = {}): string[] {
  const allowed = new Set(options.allowStatuses ?? []);
  return [
    ...page.pageErrors.map((e) => `page error: ${e}`),
    ...page.consoleErrors.map((e) => `console error: ${e}`),
    ...page.failedRequests
      .filter((r) => r.status === undefined || !allowed.has(r.status))
      .filter((r) => !options.allow?.(r))
      .map((r) => `request ${r.method} ${r.url} ${r.status !== undefined ? `→ ${r.status}` : `✗ ${r.reason}`}`),
  ];
}

/** Throws, listing them, when anything went wrong on `page` (see `pageProblems`). */
export function expectClean(page: ConsolePage, options: CleanOptions = {}): void {
  const problems = pageProblems(page, options);
  if (problems.length > 0) throw new Error(`the page had ${problems.length} problem(s):\n${problems.join('\n')}`);
}

/**
 * One browser for the calling test file (launched in `beforeAll`, closed in `afterAll`); pages opened in a test are
 * closed after it, and the test fails if any of them had an uncaught page error.
 */
export function useBrowser(): TestBrowser {
  let browser: Browser | undefined;
  let opened: ConsolePage[] = [];
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterEach(async () => {
    const pages = opened;
    opened = [];
    const errors = pages.flatMap((p) => p.pageErrors);
    await Promise.all(pages.map((p) => p.close().catch(() => undefined)));
    if (errors.length > 0) throw new Error(`uncaught page error(s):\n${errors.join('\n')}`);
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    get browser(): Browser {
      if (!browser) throw new Error('useBrowser(): the browser starts in beforeAll; use it inside a test');
      return browser;
    },
    async open(url?: string, options?: OpenOptions): Promise<ConsolePage> {
      const page = await openConsolePage(this.browser, url, options);
      opened.push(page);
      return page;
    },
  };
}

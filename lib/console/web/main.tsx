/**
 * The console's shell: sign-in (an API key pasted once, kept in sessionStorage), hash routing over the page table
 * (`pages/index.ts`), the sidebar and header, and the keyboard help (`?`). Pages get the API client, their route's
 * parameters and query, and `navigate`; they say themselves when they are loading or failed.
 */
import { Component, render, type ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { ConsoleApiError, createConsoleApi, type ConsoleApi } from './api-client.ts';
import { ErrorPanel, missingScope } from './components/page-state.tsx';
import { pages } from './pages/index.ts';
import { matchPage, parseHash, type HashRoute } from './router.ts';
import { clearApiKey, readApiKey, storeApiKey } from './session.ts';

/** The shortcuts every page has; queue pages list theirs beside the queue. */
const GLOBAL_SHORTCUTS: Array<[string, string]> = [
  ['?', 'show or hide this help'],
  ['Esc', 'close this help'],
  ['g then o', 'go to the overview'],
  ['g then f', 'go to feedback'],
  ['g then r', 'go to the review queue'],
  ['g then a', 'go to the annotation queue'],
  ['g then n', 'go to notices'],
];
const QUEUE_SHORTCUTS: Array<[string, string]> = [
  ['j / k', 'next / previous item'],
  ['1 … 9', 'pick a label (on the review queue: toggle a mode; 0 = no failure mode)'],
  ['Enter', 'submit the picked labels'],
  ['u', 'undo the last pick'],
];
const GO_TO: Record<string, string> = { o: '/', f: '/feedback', r: '/review', a: '/annotations', n: '/notices' };

function useHashRoute(): HashRoute {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

/** Whether a key press belongs to a text field (shortcuts stay out of typing). */
export function isTyping(event: KeyboardEvent): boolean {
  const target = event.target as HTMLElement | null;
  if (!target) return false;
  return target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

function SignIn(props: { onSignedIn: (key: string) => void; notice?: string }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>(props.notice);
  const [checking, setChecking] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = key.trim();
    if (candidate === '') {
      setError('Paste an API key first.');
      return;
    }
    setChecking(true);
    setError(undefined);
    try {
      // Any read proves the key; a key without the read scope can still sign in, and pages say what it lacks.
      await createConsoleApi({ apiKey: candidate }).get('/v1/feedback', { limit: 1 });
      props.onSignedIn(candidate);
    } catch (e) {
      // Only a 403 that is not about a scope refuses the key: anything else got past the key check.
      if (missingScope(e) || (e instanceof ConsoleApiError && e.status !== 403)) props.onSignedIn(candidate);
      else if (e instanceof ConsoleApiError) setError(`That key was refused: ${e.message}.`);
      else setError(`Could not check the key: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      setChecking(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Flywheel console</h1>
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autoComplete="off" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} autoFocus />
        <button type="submit" disabled={checking}>
          {checking ? 'Checking…' : 'Sign in'}
        </button>
        {error ? (
          <p class="error-text" role="alert">
            {error}
          </p>
        ) : null}
      </form>
      <p class="muted">
        The key stays in this tab only (sessionStorage). Locally it is in <code>.flywheel/api-key</code> (or <code>&lt;data dir&gt;/api-key</code>);
        make narrower ones with <code>flywheel keys create</code>.
      </p>
    </main>
  );
}

function KeyboardHelp(props: { onClose: () => void }) {
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" onClick={props.onClose}>
      <div class="dialog" onClick={(e) => e.stopPropagation()}>
        <h2>Keyboard shortcuts</h2>
        <table class="data-table shortcuts">
          <tbody>
            {[...GLOBAL_SHORTCUTS, ...QUEUE_SHORTCUTS].map(([keys, what]) => (
              <tr key={keys}>
                <td>
                  <kbd>{keys}</kbd>
                </td>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
    </div>
  );
}

/** Keeps a page's render error inside the page: the shell and its navigation stay usable. */
class PageBoundary extends Component<{ children: ComponentChildren }, { error: Error | undefined }> {
  override state = { error: undefined as Error | undefined };
  override componentDidCatch(error: unknown) {
    this.setState({ error: error instanceof Error ? error : new Error(String(error)) });
  }
  override render() {
    return this.state.error ? <ErrorPanel error={this.state.error} /> : this.props.children;
  }
}

function Shell(props: { apiKey: string; onSignOut: () => void }) {
  const route = useHashRoute();
  const api: ConsoleApi = useMemo(() => createConsoleApi({ apiKey: props.apiKey }), [props.apiKey]);
  const [help, setHelp] = useState(false);
  const navigate = useCallback((path: string) => {
    location.hash = `#${path}`;
  }, []);
  const match = matchPage(pages, route.path);
  useEffect(() => {
    document.title = `${match?.entry.title ?? 'Not found'} · Flywheel`;
  }, [match?.entry.title]);
  useEffect(() => {
    let pendingG = false;
    const onKey = (event: KeyboardEvent) => {
      if (isTyping(event) || event.ctrlKey || event.metaKey || event.altKey) return;
      if (event.key === '?') {
        setHelp((h) => !h);
        event.preventDefault();
      } else if (event.key === 'Escape') setHelp(false);
      else if (pendingG && GO_TO[event.key]) {
        navigate(GO_TO[event.key]!);
        pendingG = false;
      } else pendingG = event.key === 'g';
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [navigate]);
  const Page = match?.entry.component;
  return (
    <div class="layout">
      <header class="header">
        <a class="brand" href="#/">
          Flywheel
        </a>
        <span class="page-title">{match?.entry.title ?? 'Not found'}</span>
        <span class="spacer" />
        <button type="button" class="link" onClick={() => setHelp(true)} title="Keyboard shortcuts (?)">
          Shortcuts <kbd>?</kbd>
        </button>
        <a
          href="#/"
          class="sign-out"
          onClick={(e) => {
            e.preventDefault();
            props.onSignOut();
          }}
        >
          Sign out
        </a>
      </header>
      <nav class="sidebar" aria-label="pages">
        <ul>
          {pages
            .filter((p) => p.nav)
            .map((p) => (
              <li key={p.path}>
                <a href={`#${p.path}`} class={match?.entry === p ? 'active' : ''} aria-current={match?.entry === p ? 'page' : undefined}>
                  {p.title}
                </a>
              </li>
            ))}
        </ul>
      </nav>
      <main class="content" id="content">
        {Page ? (
          <PageBoundary key={route.path}>
            <Page api={api} params={match.params} query={route.query} navigate={navigate} />
          </PageBoundary>
        ) : (
          <div class="error-panel" role="alert">
            <strong>No page at {route.path}</strong>
            <p>
              <a href="#/">Back to the overview</a>
            </p>
          </div>
        )}
      </main>
      {help ? <KeyboardHelp onClose={() => setHelp(false)} /> : null}
    </div>
  );
}

function App() {
  const [apiKey, setApiKey] = useState(() => readApiKey());
  if (!apiKey) {
    return (
      <SignIn
        onSignedIn={(key) => {
          storeApiKey(key);
          setApiKey(key);
        }}
      />
    );
  }
  return (
    <Shell
      apiKey={apiKey}
      onSignOut={() => {
        clearApiKey();
        setApiKey(undefined);
      }}
    />
  );
}

render(<App />, document.getElementById('app')!);

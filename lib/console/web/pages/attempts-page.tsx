/**
 * Attempts (`#/attempts?checkpoint=&suite=&mode=&outcome=&task=&sweep=`): the attempts of sweeps, newest sweeps first,
 * filtered as the results page's cells link them, each with its outcome, integrity flags, judge score and size; one
 * opens the attempt viewer. "More" follows the API's cursor.
 *
 * @example
 * pages.push({ path: '/attempts', title: 'Attempts', nav: true, component: AttemptsPage });
 */
import { useEffect, useState } from 'preact/hooks';
import type { AttemptSummaryView } from '../components/insights/api-views.ts';
import { formatDuration, formatNumber, formatPercent, formatTime, href } from '../components/format.ts';
import { ErrorPanel, Loading } from '../components/page-state.tsx';
import type { PageProps } from '../page.ts';
import { FilterSelect } from '../components/filter-select.tsx';
import { HeadedTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';

const FILTERS = ['checkpoint', 'suite', 'mode', 'outcome', 'task', 'sweep'] as const;
const PAGE = 50;
/** API calls one "page" of the list makes at most. */
const MAX_CALLS_PER_PAGE = 5;

/** '1 flag', '3 flags'. */
function flags(n: number): string {
  return `${n} flag${n === 1 ? '' : 's'}`;
}

interface Listing {
  attempts: AttemptSummaryView[];
  nextCursor?: string;
  loading: boolean;
  error?: Error;
}

export function AttemptsPage(props: PageProps) {
  const { api, query, navigate } = props;
  const filters = Object.fromEntries(FILTERS.map((f) => [f, query.get(f) ?? ''])) as Record<(typeof FILTERS)[number], string>;
  const key = FILTERS.map((f) => filters[f]).join('\u0000');
  const [listing, setListing] = useState<Listing>({ attempts: [], loading: true });
  const load = async (cursor: string | undefined, previous: AttemptSummaryView[]) => {
    setListing({ attempts: previous, loading: true });
    try {
      // A filtered page may come back short, even empty, while more follow (each call reads a bounded number of
      // partitions): ask on, a few calls at most, until a page's worth is found.
      const found: AttemptSummaryView[] = [];
      let next = cursor;
      for (let calls = 0; calls < MAX_CALLS_PER_PAGE; calls++) {
        const page = await api.get<{ attempts: AttemptSummaryView[]; nextCursor?: string }>('/v1/attempts', { ...filters, limit: PAGE - found.length, cursor: next });
        found.push(...page.attempts);
        next = page.nextCursor;
        if (!next || found.length >= PAGE) break;
      }
      setListing({ attempts: [...previous, ...found], loading: false, ...(next ? { nextCursor: next } : {}) });
    } catch (error) {
      setListing({ attempts: previous, loading: false, error: error instanceof Error ? error : new Error(String(error)) });
    }
  };
  useEffect(() => {
    void load(undefined, []);
  }, [api, key]);
  const set = (name: string, value: string) => {
    const params = new URLSearchParams();
    for (const f of FILTERS) {
      const v = f === name ? value : filters[f];
      if (v) params.set(f, v);
    }
    const qs = params.toString();
    navigate(`/attempts${qs ? `?${qs}` : ''}`);
  };
  return (
    <section class="page attempts-page">
      <h1>Attempts</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        {(['checkpoint', 'suite', 'task', 'sweep'] as const).map((f) => (
          <label key={f}>
            {f}{' '}
            <input value={filters[f]} aria-label={`${f} filter`} onChange={(e) => set(f, (e.currentTarget as HTMLInputElement).value.trim())} />{' '}
          </label>
        ))}
        <FilterSelect label="mode " ariaLabel="mode filter" any="both" value={filters.mode} options={['strict', 'lenient']} onChange={(v) => set('mode', v)} />{' '}
        <FilterSelect
          label="outcome "
          ariaLabel="outcome filter"
          value={filters.outcome}
          options={['passed', 'failed', { value: 'infrastructure-error', label: 'infrastructure error' }, 'ungraded']}
          onChange={(v) => set('outcome', v)}
        />
      </form>
      {listing.error && <ErrorPanel error={listing.error} />}
      {!listing.loading && !listing.error && listing.attempts.length === 0 && (
        <p class="empty">{listing.nextCursor ? 'None found in the newest sweeps yet; “More” looks further back.' : 'No attempts match. Attempts are listed from sweeps.'}</p>
      )}
      {listing.attempts.length > 0 && (
        <HeadedTable class="attempts" headings={['Task', 'Checkpoint', 'Suite', 'Mode', 'Outcome', 'Integrity', 'Judge', 'Turns', 'Tokens', 'Time', 'Finished']}>
          {listing.attempts.map((a) => (
            <tr key={a.id} data-attempt={a.attemptId}>
              <td>
                <a href={href(`/attempts/${encodeURIComponent(a.id)}`)}>{a.taskId}</a>
                {a.n > 0 && <span class="muted"> #{a.n + 1}</span>}
              </td>
              <td>{a.checkpoint ?? '—'}</td>
              <td>{a.suite}</td>
              <td>{a.mode}</td>
              <td>
                <Badge status={a.outcome} />
                {a.stopReason && <div class="muted">{a.stopReason}</div>}
              </td>
              <td>{a.integrityFailed ? <span class="error-text">failed ({flags(a.integrityFlags)})</span> : a.integrityFlags > 0 ? flags(a.integrityFlags) : '—'}</td>
              <td>{a.judgeScore === null ? '—' : formatPercent(a.judgeScore, 0)}</td>
              <td>{formatNumber(a.turns)}</td>
              <td>{formatNumber(a.promptTokens + a.completionTokens)}</td>
              <td>{formatDuration(a.durationMs)}</td>
              <td>{formatTime(a.finishedAt)}</td>
            </tr>
          ))}
        </HeadedTable>
      )}
      {listing.loading && <Loading what="attempts" />}
      {!listing.loading && listing.nextCursor && (
        <button type="button" onClick={() => void load(listing.nextCursor, listing.attempts)}>
          More
        </button>
      )}
    </section>
  );
}

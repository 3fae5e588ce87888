/**
 * Results (`#/results?suite=&checkpoint=`): the newest score of every checkpoint × suite, strict beside lenient, each
 * with its 95% interval (Wilson over tasks, as the sweep computed it) and how many tasks it rests on; the gap between
 * the modes is how much a pass leaned on what strict takes away. Filter by suite or checkpoint; a cell opens the
 * attempts behind it. A chart draws the same numbers with their intervals.
 *
 * @example
 * pages.push({ path: '/results', title: 'Results', nav: true, component: ResultsPage });
 */
import { buildIntervalBarChart } from '../../../shared/chart/build-interval-bar-chart.ts';
import { ConsoleApiError, type ConsoleApi } from '../api-client.ts';
import { ChartView } from '../components/chart-view.tsx';
import type { CheckpointRow, HarnessMode, IncumbentView, ResultRow, SuiteRow } from '../components/insights/api-views.ts';
import { formatInterval, formatPercent, formatSignedPercent, formatTime, href } from '../components/format.ts';
import { LoadView } from '../components/page-state.tsx';
import { useLoad } from '../components/use-load.ts';
import type { PageProps } from '../page.ts';
import { FilterSelect } from '../components/filter-select.tsx';
import { HeadedTable } from '../components/data-table.tsx';

const MODES: HarnessMode[] = ['strict', 'lenient'];

/** One row of the table: a checkpoint on a suite, its newest result per mode. */
export interface ResultPair {
  checkpoint: string;
  suite: string;
  byMode: Partial<Record<HarnessMode, ResultRow>>;
}

/**
 * The newest row of each checkpoint × suite × mode (rows come oldest first), paired by checkpoint × suite, sorted by
 * suite then checkpoint.
 *
 * @example
 * latestPairs(rows); // [{ checkpoint: 'ckpt-a', suite: 'forge-py', byMode: { strict: …, lenient: … } }]
 */
export function latestPairs(rows: ResultRow[]): ResultPair[] {
  const pairs = new Map<string, ResultPair>();
  for (const row of rows) {
    const key = `${row.suite}\u0000${row.checkpoint}`;
    const pair = pairs.get(key) ?? { checkpoint: row.checkpoint, suite: row.suite, byMode: {} };
    const seen = pair.byMode[row.mode];
    if (!seen || seen.at <= row.at) pair.byMode[row.mode] = row;
    pairs.set(key, pair);
  }
  return [...pairs.values()].sort((a, b) => a.suite.localeCompare(b.suite) || a.checkpoint.localeCompare(b.checkpoint));
}

/** The rows the filters ask for: `/v1/results` needs a suite or a checkpoint, so without either, every suite's. */
async function loadResults(api: ConsoleApi, suite: string, checkpoint: string, suites: SuiteRow[]): Promise<ResultRow[]> {
  if (suite || checkpoint) {
    return (await api.get<{ items: ResultRow[] }>('/v1/results', { suite, checkpoint, limit: 1000 })).items;
  }
  const lists = await Promise.all(suites.map((s) => api.get<{ items: ResultRow[] }>('/v1/results', { suite: s.id, limit: 1000 })));
  return lists.flatMap((l) => l.items);
}

async function loadIncumbent(api: ConsoleApi): Promise<IncumbentView | undefined> {
  try {
    return await api.get<IncumbentView>('/v1/incumbent');
  } catch (error) {
    // 404: none was ever set, which is fine to show as "none".
    if (error instanceof ConsoleApiError && error.status === 404) return undefined;
    throw error;
  }
}

function ModeCell(props: { row: ResultRow | undefined; pair: ResultPair }) {
  const { row, pair } = props;
  if (!row) return <td class="empty">not run</td>;
  return (
    <td class="score-cell">
      <a href={href('/attempts', { checkpoint: pair.checkpoint, suite: pair.suite, mode: row.mode })} title={`attempts of ${pair.checkpoint} on ${pair.suite} (${row.mode})`}>
        <strong class="score" data-mode={row.mode}>
          {formatPercent(row.score)}
        </strong>
      </a>{' '}
      <span class="interval" data-mode={row.mode}>
        {formatInterval(row.ci)}
      </span>
      <div class="muted">
        {row.passes}/{row.attempts} attempts passed · {row.n}/{row.tasks} tasks
        {row.infrastructureErrors > 0 ? ` · ${row.infrastructureErrors} infrastructure errors` : ''}
        {row.ungraded > 0 ? ` · ${row.ungraded} ungraded` : ''}
        {row.shardsFailed > 0 ? ` · ${row.shardsFailed} shards failed` : ''}
      </div>
    </td>
  );
}

function ResultsTable(props: { pairs: ResultPair[]; incumbent: string | undefined }) {
  if (props.pairs.length === 0) return <p class="empty">No results yet: a sweep writes them when it finishes a cell.</p>;
  return (
    <HeadedTable class="results" headings={['Suite', 'Checkpoint', 'Strict [95% interval]', 'Lenient [95% interval]', 'Lenient − strict', 'Sweep']}>
      {props.pairs.map((pair) => {
        const strict = pair.byMode.strict;
        const lenient = pair.byMode.lenient;
        const gap = strict?.score != null && lenient?.score != null ? lenient.score - strict.score : undefined;
        const newest = [strict, lenient].filter((r): r is ResultRow => r !== undefined).sort((a, b) => b.at.localeCompare(a.at))[0];
        return (
          <tr key={`${pair.suite}/${pair.checkpoint}`} data-checkpoint={pair.checkpoint} data-suite={pair.suite}>
            <td>
              <a href={href(`/suites/${encodeURIComponent(pair.suite)}`)}>{pair.suite}</a>
            </td>
            <td>
              {pair.checkpoint}
              {pair.checkpoint === props.incumbent && <> <span class="badge badge-good">incumbent</span></>}
            </td>
            <ModeCell row={strict} pair={pair} />
            <ModeCell row={lenient} pair={pair} />
            <td>{gap === undefined ? '—' : formatSignedPercent(gap)}</td>
            <td class="muted">
              {newest ? (
                <>
                  {newest.sweepId}
                  <br />
                  {formatTime(newest.at)}
                </>
              ) : (
                '—'
              )}
            </td>
          </tr>
        );
      })}
    </HeadedTable>
  );
}

function ResultsChart(props: { pairs: ResultPair[]; suiteFilter: string }) {
  const pairs = props.pairs.slice(0, 40);
  if (pairs.length === 0) return null;
  const categories = pairs.map((p) => (props.suiteFilter ? p.checkpoint : `${p.checkpoint} · ${p.suite}`));
  const option = buildIntervalBarChart({
    title: props.suiteFilter ? `Results on ${props.suiteFilter}` : 'Results by checkpoint and suite',
    subtitle: 'pass@1, strict beside lenient, 95% intervals',
    categories,
    series: MODES.map((mode) => ({
      name: mode,
      values: pairs.map((p) => {
        const row = p.byMode[mode];
        if (!row || row.score === null) return null;
        return { value: row.score, ...(row.ci ? { low: row.ci.low, high: row.ci.high } : {}) };
      }),
    })),
    yAxis: { name: 'pass@1', percent: true, min: 0, max: 1 },
  });
  return <ChartView option={option} height={Math.max(320, Math.min(600, 200 + pairs.length * 12))} label="results chart" />;
}

export function ResultsPage(props: PageProps) {
  const { api, query, navigate } = props;
  const suite = query.get('suite') ?? '';
  const checkpoint = query.get('checkpoint') ?? '';
  const lists = useLoad(
    async () => {
      const [suites, checkpoints, incumbent] = await Promise.all([
        api.get<{ items: SuiteRow[] }>('/v1/suites'),
        api.get<{ items: CheckpointRow[] }>('/v1/checkpoints', { limit: 200 }),
        loadIncumbent(api),
      ]);
      return { suites: suites.items, checkpoints: checkpoints.items, incumbent };
    },
    [api],
    { clearOnChange: true },
  );
  const results = useLoad(
    // Until the suites are known there is nothing to ask for; this view is not shown before then.
    async () => (lists.value ? latestPairs(await loadResults(api, suite, checkpoint, lists.value.suites)) : new Promise<never>(() => {})),
    [api, suite, checkpoint, lists.value],
    { clearOnChange: true },
  );
  const go = (next: { suite?: string; checkpoint?: string }) => {
    const params = new URLSearchParams();
    const s = next.suite ?? suite;
    const c = next.checkpoint ?? checkpoint;
    if (s) params.set('suite', s);
    if (c) params.set('checkpoint', c);
    const qs = params.toString();
    navigate(`/results${qs ? `?${qs}` : ''}`);
  };
  return (
    <section class="page results-page">
      <h1>Results</h1>
      <LoadView load={lists} what="suites and checkpoints">
        {({ suites, checkpoints, incumbent }) => (
          <>
            <form class="filters" onSubmit={(e) => e.preventDefault()}>
              <FilterSelect
                label="Suite "
                ariaLabel="suite filter"
                any="every suite"
                value={suite}
                options={suites.map((s) => ({ value: s.id, label: `${s.id} (${s.status})` }))}
                onChange={(v) => go({ suite: v })}
              />{' '}
              <FilterSelect label="Checkpoint " ariaLabel="checkpoint filter" any="every checkpoint" value={checkpoint} options={checkpoints.map((c) => c.id)} onChange={(v) => go({ checkpoint: v })} />{' '}
              <span class="muted">Incumbent: {incumbent ? `${incumbent.checkpoint} since ${formatTime(incumbent.since)}` : 'none set yet'}</span>
            </form>
            <LoadView load={results} what="results">
              {(pairs) => (
                <>
                  <ResultsChart pairs={pairs} suiteFilter={suite} />
                  <ResultsTable pairs={pairs} incumbent={incumbent?.checkpoint} />
                </>
              )}
            </LoadView>
          </>
        )}
      </LoadView>
    </section>
  );
}

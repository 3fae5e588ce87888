/**
 * One experiment (`#/experiments/:id`): its arms, status and ramp, the newest analysis per metric (each treatment's
 * relative lift against the control with its interval, the verdict and the rule behind it, drawn as a forest plot),
 * the sample-ratio check, what the analysis recommends, its history, and the decision buttons (admin): start, stop,
 * ship an arm, roll back, extend, analyse now. Each asks for a confirmation and, where the API wants one, a reason.
 *
 * @example
 * pages.push({ path: '/experiments/:id', title: 'Experiment', nav: false, component: ExperimentPage });
 */
import { useState } from 'preact/hooks';
import { buildLiftChart } from '../../../shared/chart/build-lift-chart.ts';
import { ChartView } from '../components/chart-view.tsx';
import { ActionButton } from '../components/insights/action-button.tsx';
import type { AnalysisView, ExperimentChangeView, ExperimentView } from '../components/insights/api-views.ts';
import { FieldRows } from '../components/value.tsx';
import { formatInterval, formatNumber, formatPercent, formatSignedPercent, formatTime } from '../components/format.ts';
import { LoadView } from '../components/page-state.tsx';
import { useLoad } from '../components/use-load.ts';
import type { PageProps } from '../page.ts';
import { HeadedTable } from '../components/data-table.tsx';
import { decisionText, rampText } from './experiments-page.tsx';
import { Badge } from '../components/badge.tsx';

type Metric = AnalysisView['metrics'][number];

function verdictOf(v: string): 'better' | 'worse' | 'flat' {
  return v === 'better' ? 'better' : v === 'worse' ? 'worse' : 'flat';
}

function MetricTable(props: { metrics: Metric[] }) {
  return (
    <HeadedTable class="analysis" headings={['Metric', 'Arm vs control', 'Values', 'Lift [95% interval]', 'Always-valid interval', 'Chance to win', 'Verdict']}>
      {props.metrics.flatMap((m) =>
        m.comparisons.map((c) => {
          const value = (arm: string) => {
            const a = m.arms.find((x) => x.arm === arm);
            return a && a.value !== null ? `${formatNumber(a.value * m.displayScale, 3)} (${formatNumber(a.units)} units)` : '—';
          };
          return (
            <tr key={`${m.metric}/${c.arm}`} data-metric={m.metric}>
              <td>
                {m.metric} <span class="muted">{m.role}{m.direction === 'decrease' ? ', lower is better' : ''}</span>
                {m.guardrailBreached ? <div class="error-text">guardrail breached</div> : null}
              </td>
              <td>
                {c.arm} vs {c.control}
              </td>
              <td>
                {c.arm}: {value(c.arm)}
                <br />
                {c.control}: {value(c.control)}
              </td>
              <td class="lift">
                {formatSignedPercent(c.relativeLift)} {formatInterval(c.ci, { signed: true })}
              </td>
              <td>{formatInterval(c.sequentialCi, { signed: true })}</td>
              <td>{formatPercent(c.chanceToWin)}</td>
              <td title={c.rule}>
                <span class={`verdict verdict-${c.verdict}`}>{c.verdict}</span>
                <div class="muted">{c.rule}</div>
              </td>
            </tr>
          );
        }),
      )}
    </HeadedTable>
  );
}

function LiftChart(props: { metrics: Metric[] }) {
  const rows = props.metrics.flatMap((m) =>
    m.comparisons
      .filter((c) => c.relativeLift !== null && (c.ci ?? c.sequentialCi) !== null)
      .map((c) => {
        const ci = (c.ci ?? c.sequentialCi)!;
        return { label: `${m.metric} · ${c.arm}`, estimate: c.relativeLift!, low: ci.low, high: ci.high, verdict: verdictOf(c.verdict) };
      }),
  );
  if (rows.length === 0) return null;
  return <ChartView label="lift by metric" height={Math.max(240, 90 + rows.length * 36)} option={buildLiftChart({ title: 'Relative lift against the control', subtitle: '95% intervals; 0 = no change', rows, percent: true })} />;
}

function Srm(props: { analysis: AnalysisView }) {
  const { srm } = props.analysis;
  return (
    <p class={srm.mismatch ? 'error-text srm' : 'srm'}>
      Sample ratio: {srm.mismatch ? 'MISMATCH' : 'as expected'} (p = {srm.pValue === null ? '—' : formatNumber(srm.pValue, 3)}) —{' '}
      {Object.entries(srm.observedUnits)
        .map(([arm, units]) => `${arm}: ${formatNumber(units)} units (expected ${formatPercent(srm.expectedShares[arm] ?? null, 0)})`)
        .join('; ')}
    </p>
  );
}

function Decisions(props: { e: ExperimentView; api: PageProps['api']; onDone: () => void }) {
  const { e, api, onDone } = props;
  const id = encodeURIComponent(e.definition.id);
  const [reason, setReason] = useState('');
  const [arm, setArm] = useState(e.definition.arms.find((a) => !a.control)?.id ?? '');
  const [extendDays, setExtendDays] = useState('7');
  const noReason = reason.trim() === '';
  const decide = (body: Record<string, unknown>) => () => api.post(`/v1/experiments/${id}/decide`, { ...body, reason: reason.trim() });
  const open = e.status === 'draft' || e.status === 'running' || e.status === 'stopped';
  return (
    <div class="decisions">
      <h2>Decide</h2>
      <p class="muted">Needs an admin key. Stop, ship, roll back and extend say why.</p>
      <label>
        Reason <input value={reason} aria-label="decision reason" onInput={(ev) => setReason((ev.currentTarget as HTMLInputElement).value)} />
      </label>{' '}
      <label>
        Arm{' '}
        <select value={arm} aria-label="arm" onChange={(ev) => setArm((ev.currentTarget as HTMLSelectElement).value)}>
          {e.definition.arms
            .filter((a) => !a.control)
            .map((a) => (
              <option key={a.id} value={a.id}>
                {a.id} ({a.checkpoint})
              </option>
            ))}
        </select>
      </label>{' '}
      <label>
        Extend by <input type="number" min={1} max={365} value={extendDays} aria-label="extend days" onInput={(ev) => setExtendDays((ev.currentTarget as HTMLInputElement).value)} /> days
      </label>
      <div class="buttons">
        <ActionButton label="Start" disabled={e.status !== 'draft'} confirm={`Start ${e.definition.id}? Units get assigned to its arms.`} run={() => api.post(`/v1/experiments/${id}/start`)} onDone={onDone} />
        <ActionButton label="Analyse now" disabled={e.status === 'draft'} run={() => api.post(`/v1/experiments/${id}/analyze`)} onDone={onDone} />
        <ActionButton label="Stop" danger disabled={e.status !== 'running' || noReason} confirm={`Stop ${e.definition.id}? Every unit gets the control.`} run={() => api.post(`/v1/experiments/${id}/stop`, { reason: reason.trim() })} onDone={onDone} />
        <ActionButton label="Ship arm" disabled={!open || e.status === 'draft' || noReason || !arm} confirm={`Ship arm ${arm} of ${e.definition.id}? Its checkpoint becomes the incumbent.`} run={decide({ kind: 'ship', arm })} onDone={onDone} />
        <ActionButton label="Roll back" danger disabled={!open || e.status === 'draft' || noReason} confirm={`Roll ${e.definition.id} back to the control?`} run={decide({ kind: 'rollback' })} onDone={onDone} />
        <ActionButton label="Extend" disabled={e.status !== 'running' || noReason || !(Number(extendDays) > 0)} confirm={`Extend ${e.definition.id} by ${extendDays} days?`} run={decide({ kind: 'extend', extendDays: Number(extendDays) })} onDone={onDone} />
      </div>
    </div>
  );
}

export function ExperimentPage(props: PageProps) {
  const { api, params } = props;
  const id = params['id'] ?? '';
  const detail = useLoad(async () => {
    const [d, analyses] = await Promise.all([
      api.get<{ experiment: ExperimentView; changes: ExperimentChangeView[] }>(`/v1/experiments/${encodeURIComponent(id)}`),
      api.get<{ items: AnalysisView[] }>(`/v1/experiments/${encodeURIComponent(id)}/analyses`, { limit: 1 }),
    ]);
    return { ...d, analysis: analyses.items[0] };
  }, [api, id], { clearOnChange: true });
  return (
    <section class="page experiment-page">
      <h1>Experiment {id}</h1>
      <LoadView load={detail} what={`experiment ${id}`}>
        {({ experiment: e, changes, analysis }) => (
          <>
            <FieldRows
              label="experiment"
              rows={[
                ['Name', e.definition.name],
                ['Hypothesis', e.definition.hypothesis],
                ['Status', <Badge status={e.status} />],
                ['Arms', e.definition.arms.map((a) => `${a.id}: ${a.checkpoint} (weight ${formatNumber(a.weight, 3)}${a.control ? ', control' : ''})`).join('; ')],
                ['Unit', e.definition.unitType],
                ['Metrics', `primary ${e.definition.metrics.primary}${e.definition.metrics.secondary.length ? `; secondary ${e.definition.metrics.secondary.join(', ')}` : ''}${e.definition.metrics.guardrails.length ? `; guardrails ${e.definition.metrics.guardrails.map((g) => `${g.metric} (≤ ${formatPercent(g.maxRegression, 0)} worse)`).join(', ')}` : ''}`],
                ['Ramp', `${rampText(e)}${e.rampStepSince ? ` since ${formatTime(e.rampStepSince)}` : ''}; steps ${e.definition.ramp.map((s) => `${s.percent}%`).join(' → ')}`],
                ['Stopping rule', e.definition.stoppingRule.kind],
                ['Planned units per arm', formatNumber(e.plannedUnitsPerArm)],
                ['Holdout', e.definition.holdout > 0 ? formatPercent(e.definition.holdout, 0) : undefined],
                ['Origin', e.origin.kind === 'person' ? `created by ${e.origin.by}` : `proposed by training run ${e.origin.runId} (${e.origin.checkpoint}, sweep ${e.origin.sweepId})`],
                ['Created', formatTime(e.createdAt)],
                ['Started', e.startedAt ? formatTime(e.startedAt) : undefined],
                ['Stopped', e.stoppedAt ? `${formatTime(e.stoppedAt)}${e.stopReason ? `: ${e.stopReason}` : ''}` : undefined],
                ['Stopped arms', e.stoppedArms.length ? e.stoppedArms.map((s) => `${s.arm} (${s.reason}, ${formatTime(s.at)}): ${s.detail}`).join('; ') : undefined],
                ['Decision', decisionText(e)],
              ]}
            />
            <h2>Newest analysis</h2>
            {analysis ? (
              <>
                <p>
                  {formatTime(analysis.at)} · {formatPercent(analysis.progress, 0)} of the planned sample ·{' '}
                  <strong>
                    recommends {analysis.recommendation.action}
                    {analysis.recommendation.arm ? ` (arm ${analysis.recommendation.arm})` : ''}
                  </strong>
                  : {analysis.recommendation.because}
                </p>
                <Srm analysis={analysis} />
                <LiftChart metrics={analysis.metrics} />
                <MetricTable metrics={analysis.metrics} />
              </>
            ) : (
              <p class="empty">Not analysed yet: the schedule analyses running experiments, or press “Analyse now”.</p>
            )}
            <Decisions e={e} api={api} onDone={detail.reload} />
            <h2>History</h2>
            <ol class="history">
              {changes.map((c) => (
                <li key={c.seq}>
                  {formatTime(c.at)} — {c.change} by {c.by}
                </li>
              ))}
            </ol>
          </>
        )}
      </LoadView>
    </section>
  );
}

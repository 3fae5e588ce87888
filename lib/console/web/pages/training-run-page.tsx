/**
 * One training run (`#/training/:id`): status and where it is (step, heartbeat, dataset, checkpoint, sweep), the
 * configuration in brief, one curve per metric the trainer writes (loss, and every other number of its metrics
 * lines), and stop / resume (admin, confirmed).
 *
 * @example
 * pages.push({ path: '/training/:id', title: 'Training run', nav: false, component: TrainingRunPage });
 */
import { buildLineChart } from '../../../shared/chart/build-line-chart.ts';
import { ChartView } from '../components/chart-view.tsx';
import { ActionButton } from '../components/insights/action-button.tsx';
import type { TrainingMetricsLineView, TrainingRunView } from '../components/insights/api-views.ts';
import { FieldRows } from '../components/value.tsx';
import { formatNumber, formatTime, href } from '../components/format.ts';
import { LoadView } from '../components/page-state.tsx';
import { useLoad } from '../components/use-load.ts';
import type { PageProps } from '../page.ts';
import { stepText } from './training-page.tsx';
import { Badge } from '../components/badge.tsx';

const TERMINAL = ['succeeded', 'failed', 'stopped'];
/** Fields of a metrics line that are not curves. */
const NOT_CURVES = new Set(['step', 'at']);

/**
 * Each numeric field of the metrics lines as a series of [step, value], loss first, the rest by name.
 *
 * @example
 * curvesOf([{ step: 0, at: '…', loss: 2.1, tokens: 512 }]); // [['loss', [[0, 2.1]]], ['tokens', [[0, 512]]]]
 */
export function curvesOf(lines: TrainingMetricsLineView[]): Array<[string, Array<[number, number]>]> {
  const series = new Map<string, Array<[number, number]>>();
  for (const line of lines) {
    for (const [name, value] of Object.entries(line)) {
      if (NOT_CURVES.has(name) || typeof value !== 'number' || !Number.isFinite(value)) continue;
      const points = series.get(name) ?? [];
      points.push([line.step, value]);
      series.set(name, points);
    }
  }
  return [...series.entries()].sort(([a], [b]) => (a === 'loss' ? -1 : b === 'loss' ? 1 : a.localeCompare(b)));
}

function configSummary(run: TrainingRunView): string {
  const t = run.request.trainer;
  return [
    `${formatNumber(t.steps)} steps`,
    `learning rate ${formatNumber(t.learningRate, 3)}`,
    `batch ${formatNumber(t.batchSize)}`,
    t.lora ? `LoRA rank ${t.lora.rank}` : 'full fine-tune',
    `${t.gpus} GPU${t.gpus === 1 ? '' : 's'} × ${t.nodes} node${t.nodes === 1 ? '' : 's'}`,
  ].join(', ');
}

function datasetSummary(run: TrainingRunView): string {
  const d = run.request.dataset;
  const parts = [
    d.runs.length ? `runs ${d.runs.join(', ')}` : '',
    d.sweeps.length ? `sweeps ${d.sweeps.join(', ')}` : '',
    d.feedback ? `production feedback (up to ${formatNumber(d.feedback.limit)})` : '',
    `decisions: ${d.decisions}`,
  ].filter((p) => p !== '');
  return parts.join('; ');
}

export function TrainingRunPage(props: PageProps) {
  const { api, params } = props;
  const id = params['id'] ?? '';
  const path = `/v1/training-runs/${encodeURIComponent(id)}`;
  const run = useLoad(() => api.get<TrainingRunView>(path), [api, id], { clearOnChange: true });
  const curves = useLoad(() => api.get<{ lines: TrainingMetricsLineView[] }>(`${path}/curves`), [api, id, run.value?.step], { clearOnChange: true });
  return (
    <section class="page training-run-page">
      <h1>Training run {id}</h1>
      <LoadView load={run} what={`training run ${id}`}>
        {(r) => (
          <>
            <FieldRows
              label="training run"
              rows={[
                ['Status', <Badge status={r.status} />],
                ['Error', r.error ? `${r.error.error}: ${r.error.cause}` : undefined],
                ['Base', r.request.base],
                ['Step', stepText(r)],
                ['Last heartbeat', r.lastHeartbeatAt ? `${formatTime(r.lastHeartbeatAt)} (stall alarm after ${r.request.stallMinutes} min)` : undefined],
                ['Configuration', configSummary(r)],
                ['Dataset', `${datasetSummary(r)}${r.datasetId ? ` → ${r.datasetId}` : ''}`],
                ['Checkpoint', r.checkpointId ? <a href={href('/results', { checkpoint: r.checkpointId })}>{r.checkpointId}</a> : undefined],
                ['Sweep', r.sweepId],
                ['Then', `${r.request.sweep ? 'sweep the checkpoint' : 'no sweep'}${r.request.proposeExperiment ? ', propose an A/B test when it beats the incumbent' : ''}`],
                ['Created', `${formatTime(r.createdAt)}${r.createdBy ? ` by ${r.createdBy}` : ''}`],
                ['Ended', r.endedAt ? `${formatTime(r.endedAt)}${r.stoppedBy ? ` (stopped by ${r.stoppedBy})` : ''}` : undefined],
                ['Resumed', r.resumes ? `${r.resumes} times` : undefined],
              ]}
            />
            <div class="buttons">
              <ActionButton label="Stop" danger disabled={TERMINAL.includes(r.status)} confirm={`Stop training run ${r.runId}? The trainer job is stopped; it can be resumed from its last saved state.`} run={() => api.post(`${path}/stop`)} onDone={run.reload} />
              <ActionButton label="Resume" disabled={r.status !== 'stopped' && r.status !== 'failed'} confirm={`Resume training run ${r.runId} from its last saved state?`} run={() => api.post(`${path}/resume`)} onDone={run.reload} />
            </div>
            <h2>Curves</h2>
            <LoadView load={curves} what="curves">
              {({ lines }) => {
                const all = curvesOf(lines);
                if (all.length === 0) return <p class="empty">No metrics yet: the trainer writes one line per step.</p>;
                return (
                  <div class="curves">
                    {all.map(([name, points]) => (
                      <ChartView
                        key={name}
                        label={`${name} curve`}
                        height={260}
                        option={buildLineChart({ title: name, subtitle: `${points.length} steps`, x: { name: 'step', type: 'value' }, y: { name }, series: [{ name, points }] })}
                      />
                    ))}
                  </div>
                );
              }}
            </LoadView>
          </>
        )}
      </LoadView>
    </section>
  );
}

/**
 * The attempt viewer (`#/attempts/:id`): what the attempt was (task, checkpoint, mode, outcome, tokens, time, tries),
 * its test outcomes (pass or fail per test), integrity flags, the judge's verdict per criterion, the decision records
 * (the bad decision and its hint), the diff, and the trajectory with its tool calls, a page of steps at a time.
 *
 * @example
 * pages.push({ path: '/attempts/:id', title: 'Attempt', nav: false, component: AttemptPage });
 */
import { useState } from 'preact/hooks';
import type { AttemptDetailView, TrajectoryStepView } from '../components/insights/api-views.ts';
import { DiffView } from '../components/insights/diff-view.tsx';
import { FieldRows } from '../components/value.tsx';
import { formatDuration, formatNumber, formatPercent, formatTime, href } from '../components/format.ts';
import { ErrorPanel, LoadView } from '../components/page-state.tsx';
import { TrajectoryView } from '../components/insights/trajectory-view.tsx';
import { useLoad } from '../components/use-load.ts';
import type { PageProps } from '../page.ts';
import { HeadedTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';

const OUTCOME_COLOURS: Record<string, string> = { passed: '#1a7f37', failed: '#cf222e', error: '#cf222e', missing: '#9a6700', skipped: '#6e7781' };

function Tests(props: { grade: AttemptDetailView['grade'] }) {
  const g = props.grade;
  if (!g) return <p class="empty">Not graded (an infrastructure error, or no verdict could be given).</p>;
  return (
    <>
      <p>
        Verdict: <strong class={g.passed ? 'badge badge-good' : 'badge badge-bad'}>{g.passed ? 'passed' : 'failed'}</strong>
        {g.counts ? ` — ${g.counts.passed} passed, ${g.counts.failed} failed, ${g.counts.error} errors, ${g.counts.skipped} skipped` : ''}
      </p>
      {g.reasons.length > 0 && (
        <ul class="reasons">
          {g.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      )}
      {g.tests.length > 0 ? (
        <HeadedTable class="tests" headings={['Test', 'Outcome']}>
          {g.tests.map((t) => (
            <tr key={t.id} data-test={t.id} data-outcome={t.outcome}>
              <td>
                <code>{t.id}</code>
              </td>
              <td style={{ color: OUTCOME_COLOURS[t.outcome] ?? 'inherit', fontWeight: 'bold' }}>{t.outcome === 'passed' ? '✓ passed' : t.outcome === 'failed' ? '✗ failed' : t.outcome}</td>
            </tr>
          ))}
        </HeadedTable>
      ) : (
        <p class="muted">No per-test outcomes (a judge-only task, or grading stopped before the tests ran).</p>
      )}
      {g.testsTruncated && <p class="muted">Only the first tests are listed.</p>}
    </>
  );
}

function Integrity(props: { integrity: AttemptDetailView['integrity'] }) {
  const i = props.integrity;
  return (
    <>
      <p>
        {i.failed ? <strong class="error-text">Failed for integrity</strong> : i.flags.length > 0 ? 'Flags raised (evidence for review; they did not fail the attempt)' : 'No integrity flags.'}
        {i.observations > 0 ? ` · ${i.observations} sandbox observations` : ''}
      </p>
      {i.reasons.length > 0 && (
        <ul class="reasons">
          {i.reasons.map((r) => (
            <li key={r}>{r}</li>
          ))}
        </ul>
      )}
      {i.flags.length > 0 && (
        <HeadedTable class="flags" headings={['Flag', 'Where', 'Evidence', 'Seen in']}>
          {i.flags.map((f, n) => (
            <tr key={n} data-flag={f.kind}>
              <td>
                <strong>{f.kind}</strong>
              </td>
              <td>
                <code>
                  {f.file}
                  {f.line !== null ? `:${f.line}` : ''}
                </code>
              </td>
              <td>
                <code>{f.evidence}</code>
              </td>
              <td>
                {f.source}
                {f.messageId ? (
                  <>
                    {' '}
                    (<a href={`#step-${f.messageId}`} onClick={(e) => jumpTo(e, f.messageId!)}>step</a>)
                  </>
                ) : null}
              </td>
            </tr>
          ))}
        </HeadedTable>
      )}
    </>
  );
}

/** Scrolls to a trajectory step without changing the hash route. */
function jumpTo(e: Event, messageId: string): void {
  e.preventDefault();
  globalThis.document.getElementById(`step-${messageId}`)?.scrollIntoView({ block: 'start' });
}

function Judge(props: { judge: AttemptDetailView['judge'] }) {
  const j = props.judge;
  if (!j) return <p class="empty">No judge graded this attempt.</p>;
  return (
    <>
      <p>
        {j.judge}: score <strong>{formatPercent(j.score, 0)}</strong>
        {j.complete ? '' : ' (incomplete: a criterion was voided)'}
      </p>
      <HeadedTable class="judge" headings={['Criterion', 'Verdict', 'Why']}>
        {j.criteria.map((c) => (
          <tr key={c.id} data-criterion={c.id}>
            <td>{c.id}</td>
            <td>
              {c.verdict}
              {c.score !== undefined ? ` (${formatPercent(c.score, 0)})` : ''}
              {c.voided ? <div class="error-text">voided: {c.voided}</div> : null}
            </td>
            <td>{c.reason}</td>
          </tr>
        ))}
      </HeadedTable>
    </>
  );
}

function Decisions(props: { decisions: AttemptDetailView['decisions'] }) {
  if (props.decisions.length === 0) return <p class="empty">No decision records for this attempt.</p>;
  return (
    <HeadedTable class="decisions" headings={['Turn', 'Bad decision', 'Hint', 'Status']}>
      {props.decisions.map((d) => (
        <tr key={d.decisionId} data-decision={d.decisionId}>
          <td>
            <a href={`#step-${d.messageId}`} onClick={(e) => jumpTo(e, d.messageId)}>
              turn {d.turn}
            </a>
          </td>
          <td>
            {d.hintClass}
            {d.toolCallId ? <div class="muted">tool call {d.toolCallId}</div> : null}
          </td>
          <td>{d.hint}</td>
          <td>{d.status === 'rejected' ? <span class="error-text">rejected (the hint leaked)</span> : d.status}</td>
        </tr>
      ))}
    </HeadedTable>
  );
}

function Trajectory(props: { api: PageProps['api']; id: string; detail: AttemptDetailView }) {
  const first = props.detail.trajectory;
  const [more, setMore] = useState<{ steps: TrajectoryStepView[]; next?: number; loading: boolean; error?: Error }>({ steps: [], ...(first.nextStepOffset !== undefined ? { next: first.nextStepOffset } : {}), loading: false });
  if (!first.available) return <p class="empty">No trajectory{first.problem ? `: ${first.problem}` : ''}.</p>;
  const loadMore = async () => {
    if (more.next === undefined) return;
    setMore({ ...more, loading: true });
    try {
      const page = await props.api.get<AttemptDetailView>(`/v1/attempts/${encodeURIComponent(props.id)}`, { stepOffset: more.next });
      setMore({ steps: [...more.steps, ...page.trajectory.steps], ...(page.trajectory.nextStepOffset !== undefined ? { next: page.trajectory.nextStepOffset } : {}), loading: false });
    } catch (error) {
      setMore({ ...more, loading: false, error: error instanceof Error ? error : new Error(String(error)) });
    }
  };
  const steps = [...first.steps, ...more.steps];
  return (
    <>
      <p class="muted">
        {first.agent ? `agent ${first.agent} · ` : ''}
        {first.policy ? `policy ${first.policy} · ` : ''}
        {steps.length} of {first.totalSteps} steps shown
      </p>
      <TrajectoryView steps={steps} decisions={props.detail.decisions} flags={props.detail.integrity.flags} />
      {more.error && <ErrorPanel error={more.error} />}
      {more.next !== undefined && (
        <button type="button" disabled={more.loading} onClick={() => void loadMore()}>
          {more.loading ? 'Loading…' : 'More steps'}
        </button>
      )}
    </>
  );
}

export function AttemptPage(props: PageProps) {
  const { api, params } = props;
  const id = params['id'] ?? '';
  const detail = useLoad(() => api.get<AttemptDetailView>(`/v1/attempts/${encodeURIComponent(id)}`), [api, id], { clearOnChange: true });
  return (
    <section class="page attempt-page">
      <LoadView load={detail} what={`attempt ${id}`}>
        {(d) => {
          const a = d.attempt;
          return (
            <>
              <h1>
                Attempt: {a.taskId} <Badge status={a.outcome} />
              </h1>
              <FieldRows
                label="attempt"
                rows={[
                  ['Task', a.taskId],
                  ['Suite', <a href={href(`/suites/${encodeURIComponent(a.suite)}`)}>{a.suite}</a>],
                  ['Checkpoint', a.checkpoint ? <a href={href('/results', { checkpoint: a.checkpoint, suite: a.suite })}>{a.checkpoint}</a> : undefined],
                  ['Mode', a.mode],
                  ['Attempt', `#${a.n + 1} (${a.attemptId})`],
                  ['Outcome', `${a.outcome}${a.stopReason ? ` (stopped: ${a.stopReason})` : ''}`],
                  ['Sweep', a.sweepId ? <a href={href('/attempts', { sweep: a.sweepId })}>{a.sweepId}</a> : undefined],
                  ['Model', a.model],
                  ['Turns', formatNumber(a.turns)],
                  ['Tokens', `${formatNumber(a.promptTokens)} prompt, ${formatNumber(a.completionTokens)} completion`],
                  ['Time', `${formatDuration(a.durationMs)}, finished ${formatTime(a.finishedAt)}`],
                  ['Tries', a.tries > 1 ? `${a.tries} (${d.history.filter((h) => h.outcome !== 'completed').length} infrastructure errors before the counted one)` : String(a.tries)],
                ]}
              />
              <h2>Tests</h2>
              <Tests grade={d.grade} />
              <h2>Integrity</h2>
              <Integrity integrity={d.integrity} />
              <h2>Judge</h2>
              <Judge judge={d.judge} />
              <h2>Decisions</h2>
              <Decisions decisions={d.decisions} />
              <h2>Diff</h2>
              {d.diff ? <DiffView diff={d.diff.text} truncated={d.diff.truncated} bytes={d.diff.bytes} /> : <p class="empty">No diff recorded.</p>}
              <h2>Trajectory</h2>
              <Trajectory api={api} id={id} detail={d} />
              {d.history.length > 1 && (
                <>
                  <h2>Tries</h2>
                  <ol class="tries">
                    {d.history.map((h) => (
                      <li key={h.try}>
                        {formatTime(h.startedAt)}: {h.outcome}, {formatDuration(h.durationMs)}
                        {h.error ? ` — ${h.error}` : ''}
                      </li>
                    ))}
                  </ol>
                </>
              )}
            </>
          );
        }}
      </LoadView>
    </section>
  );
}

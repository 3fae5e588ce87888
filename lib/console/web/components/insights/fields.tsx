/**
 * A record's fields as a person reads them: label, value, one row each; rows whose value is absent are left out.
 *
 * @example
 * <Fields rows={[['Status', run.status], ['Step', num(run.step)], ['Checkpoint', run.checkpointId]]} />
 */
import type { ComponentChildren } from 'preact';

export type FieldRow = [label: string, value: ComponentChildren | undefined | null];

export function Fields(props: { rows: FieldRow[]; label?: string }) {
  const rows = props.rows.filter(([, v]) => v !== undefined && v !== null && v !== '');
  return (
    <dl class="fields" aria-label={props.label}>
      {rows.map(([label, value]) => (
        <div class="field" key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

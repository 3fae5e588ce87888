/**
 * Long text (a tool's output, a file, a prompt) shown folded: the first lines, and a button that shows the rest.
 * Short text is shown whole.
 *
 * @example
 * <CollapsibleText text={result.content} lines={12} label="tool result" />
 */
import { useState } from 'preact/hooks';

export function CollapsibleText(props: { text: string; lines?: number; label?: string; class?: string }) {
  const max = props.lines ?? 12;
  const [open, setOpen] = useState(false);
  const all = props.text.split('\n');
  const long = all.length > max || props.text.length > max * 160;
  const shown = open || !long ? props.text : all.slice(0, max).join('\n').slice(0, max * 160);
  return (
    <div class={`collapsible ${props.class ?? ''}`}>
      <pre aria-label={props.label}>{shown}</pre>
      {long && (
        <button type="button" class="link" onClick={() => setOpen(!open)} aria-expanded={open}>
          {open ? 'Show less' : `Show all ${all.length} lines`}
        </button>
      )}
    </div>
  );
}

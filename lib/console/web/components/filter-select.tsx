/**
 * A list filter as a select: the empty choice first (`any`, `every status`), then the values (a value may carry its
 * own words). Pages keep the filter where they like (the URL, state) and get the new value.
 *
 * @example
 * <FilterSelect label="status" name="status" value={filters.status} options={['open', 'resolved']} onChange={(status) => setFilters({ ...filters, status })} />
 * <FilterSelect label="Status " ariaLabel="status filter" any="every status" value={status} options={STATUSES} onChange={go} />
 */
export type FilterOption = string | { value: string; label: string };

export function FilterSelect(props: {
  label: string;
  value: string;
  options: readonly FilterOption[];
  onChange(value: string): void;
  name?: string;
  ariaLabel?: string;
  /** The empty choice's words; `any` unless given. */
  any?: string;
}) {
  const options = [{ value: '', label: props.any ?? 'any' }, ...props.options.map((o) => (typeof o === 'string' ? { value: o, label: o } : o))];
  return (
    <label>
      {props.label}
      <select name={props.name} aria-label={props.ariaLabel} value={props.value} onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)}>
        {options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** A select per filter of a `{ name: value }` record, each named as its filter, changing that one filter. */
export function filterSelects<F extends Record<string, string>>(filters: F, setFilters: (next: F) => void) {
  return (name: keyof F & string, options: readonly FilterOption[]) => (
    <FilterSelect label={name} name={name} value={filters[name] ?? ''} options={options} onChange={(value) => setFilters({ ...filters, [name]: value })} />
  );
}

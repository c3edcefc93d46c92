import { humanize } from '../lib/format.ts';

/** One labelled filter: "any" (empty) or one of the values, each shown by its label or humanized. */
export function SelectFilter<T extends string>({
  label,
  any,
  value,
  options,
  onChange,
}: {
  label: string;
  any: string;
  value: T | null;
  options: readonly (T | readonly [T, string])[];
  onChange: (value: T | null) => void;
}) {
  return (
    <label className="field">
      <span>{label}</span>
      <select value={value ?? ''} onChange={(e) => onChange((e.target.value || null) as T | null)}>
        <option value="">{any}</option>
        {options.map((o) => {
          const [v, text] = typeof o === 'string' ? [o, humanize(o)] : o;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    </label>
  );
}

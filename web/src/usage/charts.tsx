// Small hand-made SVG bar charts of input and output tokens. Each is one
// image to assistive technology (role="img", named by a summary the page
// writes); the numbers themselves are in the table the page shows beside
// it. No chart library: these are two shapes, and the page stays small.
import { useTranslation } from 'react-i18next'

/** ChartRow is one bar: its label and its two stacked parts. */
export interface ChartRow {
  label: string
  input: number
  output: number
}

// Colours of the two parts, the same in the legend; text in the charts
// uses the page's text colours.
const inputFill = 'fill-indigo-600 dark:fill-indigo-400'
const outputFill = 'fill-amber-500 dark:fill-amber-300'
const inputSwatch = 'bg-indigo-600 dark:bg-indigo-400'
const outputSwatch = 'bg-amber-500 dark:bg-amber-300'
const textFill = 'fill-slate-700 dark:fill-slate-300'
const gridStroke = 'stroke-slate-200 dark:stroke-slate-700'

/** niceMax rounds v up to 1, 2 or 5 times a power of ten, so the axis reads in round numbers. */
export function niceMax(v: number): number {
  if (v <= 0) return 1
  const p = 10 ** Math.floor(Math.log10(v))
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p
  return 10 * p
}

function useCompact() {
  const { i18n } = useTranslation()
  const f = new Intl.NumberFormat(i18n.language, { notation: 'compact', maximumFractionDigits: 1 })
  return (n: number) => f.format(n)
}

/** Legend names the two colours. */
export function Legend() {
  const { t } = useTranslation()
  return (
    <ul className="mb-2 flex gap-4 text-sm">
      <li className="flex items-center gap-1">
        <span aria-hidden="true" className={`inline-block h-3 w-3 rounded-sm ${inputSwatch}`} />
        {t('usage.inputTokens')}
      </li>
      <li className="flex items-center gap-1">
        <span aria-hidden="true" className={`inline-block h-3 w-3 rounded-sm ${outputSwatch}`} />
        {t('usage.outputTokens')}
      </li>
    </ul>
  )
}

/** ColumnChart is one vertical stacked bar per row (per day), oldest on the left. */
export function ColumnChart({ rows, label }: { rows: ChartRow[]; label: string }) {
  const compact = useCompact()
  const W = 720,
    H = 240,
    left = 52,
    right = 8,
    top = 12,
    bottom = 32
  const plotW = W - left - right,
    plotH = H - top - bottom
  const max = niceMax(Math.max(0, ...rows.map((r) => r.input + r.output)))
  const slot = plotW / Math.max(1, rows.length)
  const barW = Math.max(2, Math.min(48, slot * 0.7))
  const y = (v: number) => top + plotH - (v / max) * plotH
  // At most about ten labels under the axis, evenly spaced.
  const every = Math.ceil(rows.length / 10)
  return (
    <svg role="img" aria-label={label} viewBox={`0 0 ${W} ${H}`} className="h-auto w-full max-w-3xl">
      {[0, max / 2, max].map((v) => (
        <g key={v}>
          <line x1={left} x2={W - right} y1={y(v)} y2={y(v)} className={gridStroke} strokeWidth={1} />
          <text x={left - 6} y={y(v) + 4} textAnchor="end" fontSize={12} className={textFill}>
            {compact(v)}
          </text>
        </g>
      ))}
      {rows.map((r, i) => {
        const x = left + i * slot + (slot - barW) / 2
        const hIn = (r.input / max) * plotH
        const hOut = (r.output / max) * plotH
        return (
          <g key={r.label + i}>
            <rect x={x} y={top + plotH - hIn} width={barW} height={hIn} className={inputFill} />
            <rect x={x} y={top + plotH - hIn - hOut} width={barW} height={hOut} className={outputFill} />
            {i % every === 0 && (
              <text x={x + barW / 2} y={H - bottom + 18} textAnchor="middle" fontSize={12} className={textFill}>
                {r.label}
              </text>
            )}
          </g>
        )
      })}
    </svg>
  )
}

/** shorten keeps a label to n characters, with an ellipsis when cut. */
function shorten(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 1) + '…' : s
}

/** BarChart is one horizontal stacked bar per row, in the order given (largest first). */
export function BarChart({ rows, label }: { rows: ChartRow[]; label: string }) {
  const compact = useCompact()
  const W = 720,
    rowH = 28,
    labelW = 210,
    valueW = 64,
    barH = 18
  const H = Math.max(1, rows.length) * rowH + 4
  const plotW = W - labelW - valueW
  const max = Math.max(1, ...rows.map((r) => r.input + r.output))
  return (
    <svg role="img" aria-label={label} viewBox={`0 0 ${W} ${H}`} className="h-auto w-full max-w-3xl">
      {rows.map((r, i) => {
        const yTop = i * rowH + 4
        const wIn = (r.input / max) * plotW
        const wOut = (r.output / max) * plotW
        return (
          <g key={r.label + i}>
            <text x={labelW - 8} y={yTop + barH - 4} textAnchor="end" fontSize={13} className={textFill}>
              {shorten(r.label, 30)}
            </text>
            <rect x={labelW} y={yTop} width={wIn} height={barH} className={inputFill} />
            <rect x={labelW + wIn} y={yTop} width={wOut} height={barH} className={outputFill} />
            <text x={labelW + wIn + wOut + 6} y={yTop + barH - 4} fontSize={12} className={textFill}>
              {compact(r.input + r.output)}
            </text>
          </g>
        )
      })}
    </svg>
  )
}

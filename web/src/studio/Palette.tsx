// The palette: node kinds by category. Drag one onto the canvas, or press
// Enter (or click) to add it beside the others.
import { useTranslation } from 'react-i18next'
import type { KindDescription } from '../workflow/types'
import { kindDescription, kindTitle } from '../workflow/kinds'

export const kindMime = 'application/x-agentcraft-kind'

export function Palette({ kinds, onAdd }: { kinds: KindDescription[]; onAdd: (kind: string) => void }) {
  const { t } = useTranslation()
  const groups = new Map<string, KindDescription[]>()
  for (const k of kinds) {
    if (!groups.has(k.category)) groups.set(k.category, [])
    groups.get(k.category)!.push(k)
  }
  return (
    <nav aria-label={t('studio.palette')} className="w-48 shrink-0 overflow-y-auto border-r border-slate-200 p-2 text-sm dark:border-slate-700">
      <h2 className="mb-2 font-semibold">{t('studio.palette')}</h2>
      {[...groups.entries()].map(([cat, list]) => (
        <div key={cat} role="group" aria-label={t('studio.category.' + cat, { defaultValue: cat })} className="mb-3">
          <h3 className="mb-1 text-xs font-semibold uppercase text-slate-600 dark:text-slate-400">{t('studio.category.' + cat, { defaultValue: cat })}</h3>
          <ul>
            {list.map((k) => {
              const off = !k.flags.available
              return (
                <li key={k.kind} className="mb-1">
                  <button
                    type="button"
                    draggable={!off}
                    disabled={off}
                    title={off ? k.unavailable : kindDescription(t, k)}
                    // A kind that cannot run is named by what it shows (its title and
                    // "unavailable"), its reason in the tooltip.
                    aria-label={off ? undefined : t('studio.addKind', { kind: kindTitle(t, k, k.kind) })}
                    onDragStart={(e) => {
                      e.dataTransfer.setData(kindMime, k.kind)
                      e.dataTransfer.effectAllowed = 'copy'
                    }}
                    onClick={() => onAdd(k.kind)}
                    className="w-full cursor-grab rounded border border-slate-300 bg-white px-2 py-1 text-left hover:bg-slate-100 disabled:cursor-not-allowed disabled:opacity-60 dark:border-slate-600 dark:bg-slate-900 dark:hover:bg-slate-800"
                  >
                    {kindTitle(t, k, k.kind)}
                    {off && <span className="block text-xs text-slate-600 dark:text-slate-400">{t('studio.unavailable')}</span>}
                  </button>
                </li>
              )
            })}
          </ul>
        </div>
      ))}
    </nav>
  )
}

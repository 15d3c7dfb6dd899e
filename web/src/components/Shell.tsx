import { useState, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'
import { NavLink } from 'react-router-dom'
import { languages } from '../i18n'
import { pages } from '../pages'
import { allows } from '../api'
import { useSession, useWorkspace } from '../session'
import { chooseTheme, currentTheme, type Theme } from '../theme'

const control =
  'rounded border border-slate-500 bg-white px-2 py-1 text-sm text-slate-900 dark:border-slate-500 dark:bg-slate-900 dark:text-slate-100'

/** Shell is the top bar and left nav around every signed-in page. */
export function Shell({ children }: { children: ReactNode }) {
  const { t, i18n } = useTranslation()
  const { me, workspace, chooseWorkspace, signOut } = useSession()
  const ws = useWorkspace()
  const [theme, setTheme] = useState<Theme>(currentTheme())
  const toggleTheme = () => {
    const next = theme === 'dark' ? 'light' : 'dark'
    chooseTheme(next)
    setTheme(next)
  }
  return (
    <div className="flex h-full flex-col">
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:z-10 focus:rounded focus:bg-white focus:p-2 focus:text-indigo-800 focus:underline dark:focus:bg-slate-900 dark:focus:text-indigo-200">
        {t('app.skip')}
      </a>
      <header className="flex items-center gap-3 border-b border-slate-200 px-4 py-2 dark:border-slate-800">
        <span className="mr-auto text-lg font-semibold">{t('app.name')}</span>
        <label className="flex items-center gap-1 text-sm">
          {t('topbar.workspace')}
          <select className={control} value={workspace ?? ''} onChange={(e) => chooseWorkspace(e.target.value)}>
            {me?.workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </label>
        <label className="flex items-center gap-1 text-sm">
          {t('topbar.language')}
          <select className={control} value={i18n.language} onChange={(e) => void i18n.changeLanguage(e.target.value)}>
            {languages.map((l) => (
              <option key={l.code} value={l.code} lang={l.code}>
                {l.name}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className={control} onClick={toggleTheme}>
          {theme === 'dark' ? t('topbar.themeToLight') : t('topbar.themeToDark')}
        </button>
        <span className="text-sm text-slate-500 dark:text-slate-400">{me?.user.email}</span>
        <button type="button" className={control} onClick={() => void signOut()}>
          {t('topbar.signOut')}
        </button>
      </header>
      <div className="flex min-h-0 flex-1">
        <nav aria-label={t('nav.label')} className="w-48 shrink-0 border-r border-slate-200 p-2 dark:border-slate-800">
          <ul>
            {pages.filter((p) => !p.permission || allows(ws, p.permission)).map((p) => (
              <li key={p.path}>
                <NavLink
                  to={p.path}
                  className={({ isActive }) =>
                    'block rounded px-3 py-2 ' +
                    (isActive ? 'bg-indigo-100 font-medium dark:bg-indigo-900' : 'hover:bg-slate-100 dark:hover:bg-slate-800')
                  }
                >
                  {t(p.navKey)}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" className="min-w-0 flex-1 overflow-auto">
          {children}
        </main>
      </div>
    </div>
  )
}

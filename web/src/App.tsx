import { Suspense } from 'react'
import { useTranslation } from 'react-i18next'
import { BrowserRouter, Link, Navigate, Route, Routes, useLocation } from 'react-router-dom'
import { allows } from './api'
import { ErrorBoundary } from './components/ErrorBoundary'
import { Shell } from './components/Shell'
import { pages } from './pages'
import SignIn from './pages/SignIn'
import { SessionProvider, useSession, useWorkspace } from './session'

function Loading() {
  const { t } = useTranslation()
  return (
    <p role="status" className="p-8 text-slate-600 dark:text-slate-400">
      {t('app.loading')}
    </p>
  )
}

function NotFound() {
  const { t } = useTranslation()
  return (
    <div className="p-8">
      <h1 className="mb-2 text-xl font-semibold">{t('error.notFound')}</h1>
      <Link className="text-indigo-600 underline dark:text-indigo-400" to="/chat">
        {t('error.home')}
      </Link>
    </div>
  )
}

/** NotAllowed stands in for a page the user's role may not use (Page.permission). */
function NotAllowed() {
  const { t } = useTranslation()
  return (
    <div className="p-8">
      <h1 className="mb-2 text-xl font-semibold">{t('error.notAllowed')}</h1>
      <Link className="text-indigo-600 underline dark:text-indigo-400" to="/chat">
        {t('error.home')}
      </Link>
    </div>
  )
}

function Routed() {
  const { me } = useSession()
  const ws = useWorkspace()
  const location = useLocation()
  if (me === undefined) return <Loading />
  if (me === null) {
    if (location.pathname !== '/signin') return <Navigate to="/signin" replace state={{ from: location.pathname }} />
    return (
      <ErrorBoundary>
        <SignIn />
      </ErrorBoundary>
    )
  }
  if (location.pathname === '/signin') {
    const from = (location.state as { from?: string } | null)?.from
    return <Navigate to={from && from !== '/signin' ? from : '/chat'} replace />
  }
  return (
    <Shell>
      <Routes>
        <Route path="/" element={<Navigate to="/chat" replace />} />
        {pages.map((p) => (
          <Route
            key={p.path}
            path={p.path + '/*'}
            element={
              <ErrorBoundary key={p.path}>
                {p.permission && !allows(ws, p.permission) ? (
                  <NotAllowed />
                ) : (
                  <Suspense fallback={<Loading />}>
                    <p.component />
                  </Suspense>
                )}
              </ErrorBoundary>
            }
          />
        ))}
        <Route
          path="*"
          element={
            <ErrorBoundary>
              <NotFound />
            </ErrorBoundary>
          }
        />
      </Routes>
    </Shell>
  )
}

export default function App() {
  return (
    <BrowserRouter>
      <SessionProvider>
        <Routed />
      </SessionProvider>
    </BrowserRouter>
  )
}

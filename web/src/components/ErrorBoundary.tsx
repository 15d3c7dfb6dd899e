import { Component, type ErrorInfo, type ReactNode } from 'react'
import { useTranslation } from 'react-i18next'

function Fallback({ error, reset }: { error: Error; reset: () => void }) {
  const { t } = useTranslation()
  return (
    <div role="alert" className="m-8 rounded border border-red-300 bg-red-50 p-4 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
      <h2 className="mb-2 text-lg font-semibold">{t('error.title')}</h2>
      <pre className="mb-4 whitespace-pre-wrap text-sm">{error.message}</pre>
      <button type="button" onClick={reset} className="rounded bg-red-700 px-3 py-1 text-white">
        {t('error.retry')}
      </button>
    </div>
  )
}

/** ErrorBoundary keeps one page's failure from blanking the whole studio. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  state = { error: null as Error | null }

  static getDerivedStateFromError(error: Error) {
    return { error }
  }

  componentDidCatch(error: Error, info: ErrorInfo) {
    console.error('studio page failed', error, info.componentStack)
  }

  render() {
    if (this.state.error) return <Fallback error={this.state.error} reset={() => this.setState({ error: null })} />
    return this.props.children
  }
}

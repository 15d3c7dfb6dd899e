import { lazy, type ComponentType, type LazyExoticComponent } from 'react'

/** Page is one entry of the left nav and its route. */
export interface Page {
  path: string
  /** navKey is the catalogue key of its name in the nav. */
  navKey: string
  component: LazyExoticComponent<ComponentType>
}

// The built pages, in nav order. Each loads on first visit, so the initial
// bundle stays small as pages are added (the workflow canvas with
// @xyflow/react will be one more entry here, at /studio).
export const pages: Page[] = [
  { path: '/chat', navKey: 'chat.nav', component: lazy(() => import('./pages/Chat')) },
  { path: '/studio', navKey: 'studio.nav', component: lazy(() => import('./pages/Studio')) },
  { path: '/runs', navKey: 'runs.nav', component: lazy(() => import('./pages/Runs')) },
  { path: '/knowledge', navKey: 'knowledge.nav', component: lazy(() => import('./pages/Knowledge')) },
  { path: '/tester', navKey: 'tester.nav', component: lazy(() => import('./pages/Tester')) },
  { path: '/audit', navKey: 'audit.nav', component: lazy(() => import('./pages/Audit')) },
  { path: '/usage', navKey: 'usage.nav', component: lazy(() => import('./pages/Usage')) },
  { path: '/approvals', navKey: 'approvals.nav', component: lazy(() => import('./pages/Approvals')) },
  { path: '/settings', navKey: 'settings.nav', component: lazy(() => import('./pages/Settings')) },
]

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
  { path: '/agents', navKey: 'agents.nav', component: lazy(() => import('./pages/Agents')) },
  { path: '/tools', navKey: 'tools.nav', component: lazy(() => import('./pages/Tools')) },
]

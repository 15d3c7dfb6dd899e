import { lazy, type ComponentType, type LazyExoticComponent } from 'react'
import { prefetch, type Permission } from './api'

/** Page is one entry of the left nav and its route. */
export interface Page {
  path: string
  /** navKey is the catalogue key of its name in the nav. */
  navKey: string
  component: LazyExoticComponent<ComponentType>
  /**
   * permission, when set, is what the page's API needs (the server's
   * route permission): the nav hides the page from a role without it,
   * and a deep link says so instead of loading a page of 403s.
   */
  permission?: Permission
}

/**
 * lazyPrefetching is lazy(load) for the page at base that, when its code
 * is first asked for, also starts the GETs it will make at once for the
 * path being opened (gets of the path below base, '' for the page
 * itself): on a deep link the data comes while the code downloads and
 * runs, instead of after (the page reads them with api.fetchOnce).
 */
function lazyPrefetching(base: string, gets: (rest: string) => string[], load: () => Promise<{ default: ComponentType }>) {
  return lazy(() => {
    const here = window.location.pathname
    if (here.startsWith(base + '/')) for (const p of gets(here.slice(base.length + 1))) prefetch(p)
    return load()
  })
}

// The built pages, in nav order. Each loads on first visit, so the initial
// bundle stays small as pages are added.
export const pages: Page[] = [
  { path: '/chat', navKey: 'chat.nav', component: lazy(() => import('./pages/Chat')) },
  {
    path: '/studio',
    navKey: 'studio.nav',
    // The canvas of one workflow: its definition and the node kinds.
    component: lazyPrefetching('/studio', (id) => (id ? [`/api/workflows/${decodeURIComponent(id)}`, '/api/node-kinds'] : []), () => import('./pages/Studio')),
  },
  { path: '/runs', navKey: 'runs.nav', component: lazy(() => import('./pages/Runs')) },
  { path: '/triggers', navKey: 'triggers.nav', component: lazy(() => import('./pages/Triggers')) },
  { path: '/knowledge', navKey: 'knowledge.nav', component: lazy(() => import('./pages/Knowledge')) },
  { path: '/agents', navKey: 'agents.nav', component: lazy(() => import('./pages/Agents')) },
  { path: '/tools', navKey: 'tools.nav', component: lazy(() => import('./pages/Tools')) },
  { path: '/skills', navKey: 'skills.nav', component: lazy(() => import('./pages/Skills')) },
  {
    path: '/tasks',
    navKey: 'tasks.nav',
    // One task: its view (steps, approvals, runs, events).
    component: lazyPrefetching('/tasks', (id) => (id && !id.includes('/') ? ['/api/tasks/' + encodeURIComponent(decodeURIComponent(id))] : []), () => import('./pages/Tasks')),
  },
  { path: '/approvals', navKey: 'approvals.nav', component: lazy(() => import('./pages/Approvals')) },
  { path: '/audit', navKey: 'audit.nav', component: lazy(() => import('./pages/Audit')), permission: 'admin_workspace' },
  { path: '/usage', navKey: 'usage.nav', component: lazy(() => import('./pages/Usage')) },
  { path: '/workers', navKey: 'workers.nav', component: lazy(() => import('./pages/Workers')), permission: 'admin_workspace' },
  { path: '/settings', navKey: 'settings.nav', component: lazy(() => import('./pages/Settings')) },
  { path: '/tester', navKey: 'tester.nav', component: lazy(() => import('./pages/Tester')) },
]

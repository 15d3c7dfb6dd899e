// The light/dark theme: the user's choice kept in localStorage, else the
// system's prefers-color-scheme (followed live while no choice is saved).
import { useEffect, useState } from 'react'

export type Theme = 'light' | 'dark'

const storageKey = 'agentcraft.theme'
const media = window.matchMedia('(prefers-color-scheme: dark)')

export function savedTheme(): Theme | null {
  const t = localStorage.getItem(storageKey)
  return t === 'light' || t === 'dark' ? t : null
}

export function currentTheme(): Theme {
  return savedTheme() ?? (media.matches ? 'dark' : 'light')
}

export function applyTheme(t: Theme = currentTheme()) {
  document.documentElement.classList.toggle('dark', t === 'dark')
}

export function chooseTheme(t: Theme) {
  localStorage.setItem(storageKey, t)
  applyTheme(t)
}

media.addEventListener('change', () => {
  if (!savedTheme()) applyTheme()
})

/** useDark follows the theme class on <html>, for what draws its own colours (React Flow's colorMode). */
export function useDark(): boolean {
  const [dark, setDark] = useState(() => document.documentElement.classList.contains('dark'))
  useEffect(() => {
    const o = new MutationObserver(() => setDark(document.documentElement.classList.contains('dark')))
    o.observe(document.documentElement, { attributes: true, attributeFilter: ['class'] })
    return () => o.disconnect()
  }, [])
  return dark
}

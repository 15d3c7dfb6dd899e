// The light/dark theme: the user's choice kept in localStorage, else the
// system's prefers-color-scheme (followed live while no choice is saved).

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

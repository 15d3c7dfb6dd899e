import { Route, Routes, useParams } from 'react-router-dom'
import RunsList from '../runs/RunsList'
import RunView from '../runs/RunView'

// RunViewKeyed starts afresh (state, stream) for each run, as when a
// re-run navigates from one run to the next.
function RunViewKeyed() {
  const { id } = useParams()
  return <RunView key={id} />
}

/** Runs is /runs (the list) and /runs/<id> (one run). */
export default function Runs() {
  return (
    <Routes>
      <Route index element={<RunsList />} />
      <Route path=":id" element={<RunViewKeyed />} />
    </Routes>
  )
}

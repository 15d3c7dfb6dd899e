import { Route, Routes, useParams } from 'react-router-dom'
import TaskPage from '../tasks/TaskPage'
import TasksList from '../tasks/TasksList'

// TaskPageKeyed starts afresh for each task.
function TaskPageKeyed() {
  const { id } = useParams()
  return <TaskPage key={id} />
}

/** Tasks is /tasks (the list and a new task) and /tasks/<id> (one task and its evidence). */
export default function Tasks() {
  return (
    <Routes>
      <Route index element={<TasksList />} />
      <Route path=":id" element={<TaskPageKeyed />} />
    </Routes>
  )
}

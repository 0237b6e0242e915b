import React, { useState } from 'react';
import { Plus, Trash2, Check } from 'lucide-react';

interface Todo {
  id: number;
  text: string;
  done: boolean;
}

type Filter = 'all' | 'active' | 'done';

export default function App() {
  const [todos, setTodos] = useState<Todo[]>([
    { id: 1, text: 'Try Flint', done: true },
    { id: 2, text: 'Write a React app', done: false },
  ]);
  const [draft, setDraft] = useState<string>('');
  const [filter, setFilter] = useState<Filter>('all');

  const add = (e: React.FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const text = draft.trim();
    if (!text) return;
    setTodos((prev) => [...prev, { id: Date.now(), text, done: false }]);
    setDraft('');
  };

  const toggle = (id: number) =>
    setTodos((prev) => prev.map((t) => (t.id === id ? { ...t, done: !t.done } : t)));

  const remove = (id: number) => setTodos((prev) => prev.filter((t) => t.id !== id));

  const visible = todos.filter((t) =>
    filter === 'all' ? true : filter === 'done' ? t.done : !t.done,
  );

  return (
    <div className="min-h-screen bg-gradient-to-br from-indigo-50 to-white flex items-start justify-center p-8">
      <div className="w-full max-w-md rounded-2xl bg-white shadow-xl p-6">
        <h1 className="text-2xl font-bold text-gray-900 mb-4">My Todos</h1>
        <form onSubmit={add} className="flex gap-2 mb-4">
          <input
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            placeholder="What needs doing?"
            className="flex-1 rounded-lg border border-gray-300 px-3 py-2 focus:outline-none focus:ring-2 focus:ring-indigo-500"
          />
          <button type="submit" className="rounded-lg bg-indigo-600 px-3 py-2 text-white hover:bg-indigo-700">
            <Plus className="h-5 w-5" />
          </button>
        </form>
        <div className="flex gap-2 mb-4">
          {(['all', 'active', 'done'] as Filter[]).map((f) => (
            <button
              key={f}
              onClick={() => setFilter(f)}
              className={`rounded-full px-3 py-1 text-sm ${filter === f ? 'bg-indigo-600 text-white' : 'bg-gray-100 text-gray-700'}`}
            >
              {f}
            </button>
          ))}
        </div>
        <ul className="space-y-2">
          {visible.map((todo) => (
            <li key={todo.id} className="flex items-center gap-3 rounded-lg border p-3">
              <button onClick={() => toggle(todo.id)} aria-label="Toggle">
                <Check className={todo.done ? 'h-5 w-5 text-green-600' : 'h-5 w-5 text-gray-300'} />
              </button>
              <span className={todo.done ? 'flex-1 line-through text-gray-400' : 'flex-1'}>{todo.text}</span>
              <button onClick={() => remove(todo.id)} aria-label="Delete">
                <Trash2 className="h-4 w-4 text-red-500" />
              </button>
            </li>
          ))}
        </ul>
        <p className="mt-4 text-sm text-gray-500">{todos.filter((t) => !t.done).length} left</p>
      </div>
    </div>
  );
}

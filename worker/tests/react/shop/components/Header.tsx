import { ShoppingBag } from 'lucide-react';

interface HeaderProps {
  title: string;
  count: number;
}

export default function Header({ title, count }: HeaderProps) {
  return (
    <header className="sticky top-0 z-10 flex items-center justify-between border-b bg-white/80 px-6 py-4 backdrop-blur">
      <h1 className="text-xl font-bold tracking-tight">{title}</h1>
      <div className="relative">
        <ShoppingBag className="h-6 w-6" />
        {count > 0 && (
          <span className="absolute -right-2 -top-2 rounded-full bg-rose-500 px-1.5 text-xs text-white">{count}</span>
        )}
      </div>
    </header>
  );
}

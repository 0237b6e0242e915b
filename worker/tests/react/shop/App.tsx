import { useMemo, useState } from 'react';
import { ShoppingCart } from 'lucide-react';
import { Header, ProductCard } from './components';
import { Button } from '@/components/ui/button';
import { formatPrice } from './lib/format';
import type { Product } from './types';
import './App.css';

const PRODUCTS: Product[] = [
  { id: 'p1', name: 'Ceramic Mug', price: 18, image: 'https://picsum.photos/seed/mug/400' },
  { id: 'p2', name: 'Linen Tote', price: 32, image: 'https://picsum.photos/seed/tote/400' },
  { id: 'p3', name: 'Desk Lamp', price: 74, image: 'https://picsum.photos/seed/lamp/400' },
];

export default function App() {
  const [cart, setCart] = useState<Record<string, number>>({});
  const total = useMemo(
    () => PRODUCTS.reduce((sum, p) => sum + (cart[p.id] ?? 0) * p.price, 0),
    [cart],
  );

  return (
    <div className="min-h-screen bg-slate-50">
      <Header title="Corner Shop" count={Object.values(cart).reduce((a, b) => a + b, 0)} />
      <main className="mx-auto grid max-w-5xl grid-cols-1 gap-6 p-6 sm:grid-cols-3">
        {PRODUCTS.map((product) => (
          <ProductCard
            key={product.id}
            product={product}
            onAdd={() => setCart((c) => ({ ...c, [product.id]: (c[product.id] ?? 0) + 1 }))}
          />
        ))}
      </main>
      <footer className="mx-auto flex max-w-5xl items-center justify-between p-6">
        <span className="text-lg font-semibold">Total: {formatPrice(total)}</span>
        <Button onClick={() => setCart({})}>
          <ShoppingCart className="mr-2 h-4 w-4" /> Clear cart
        </Button>
      </footer>
    </div>
  );
}

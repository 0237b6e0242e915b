import { motion } from 'framer-motion';
import type { Product } from '../types';
import { formatPrice } from '../lib/format';
import { Button } from './ui/button';

export function ProductCard({ product, onAdd }: { product: Product; onAdd: () => void }) {
  return (
    <motion.div whileHover={{ y: -4 }} className="overflow-hidden rounded-xl bg-white shadow">
      <img src={product.image} alt={product.name} className="h-48 w-full object-cover" />
      <div className="space-y-2 p-4">
        <h2 className="font-medium">{product.name}</h2>
        <p className="text-slate-500">{formatPrice(product.price)}</p>
        <Button onClick={onAdd} className="w-full">Add to cart</Button>
      </div>
    </motion.div>
  );
}

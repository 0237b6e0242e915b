import { cn } from './utils';

export const formatPrice = (value: number): string =>
  new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(value);

export const priceClass = (sale: boolean) => cn('font-semibold', sale && 'text-rose-600');

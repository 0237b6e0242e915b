export { default as Header } from './Header';
export { ProductCard } from './ProductCard';

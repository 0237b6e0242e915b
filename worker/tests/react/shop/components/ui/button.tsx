import * as React from 'react';
import { cn } from '@/lib/utils';

export interface ButtonProps extends React.ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: 'default' | 'outline';
}

export const Button = React.forwardRef<HTMLButtonElement, ButtonProps>(
  ({ className, variant = 'default', ...props }, ref) => (
    <button
      ref={ref}
      className={cn(
        'inline-flex items-center justify-center rounded-md px-4 py-2 text-sm font-medium transition-colors',
        variant === 'outline' ? 'border border-slate-300 bg-white hover:bg-slate-100' : 'bg-slate-900 text-white hover:bg-slate-700',
        className,
      )}
      {...props}
    />
  ),
);
Button.displayName = 'Button';

import Link from "next/link";

export function Breadcrumbs({ trail }: { trail: { label: string; href?: string }[] }) {
  return (
    <nav className="breadcrumbs" aria-label="Breadcrumbs">
      {trail.map((crumb, index) => (
        <span key={index}>
          {index > 0 && " › "}
          {crumb.href ? <Link href={crumb.href}>{crumb.label}</Link> : crumb.label}
        </span>
      ))}
    </nav>
  );
}

import { notFound } from "next/navigation";

/** The zone `?domain=` names among the account's (another account's id is the 404 page); none named: the main domain's. */
export function zoneOf<Zone extends { id: number; domain: string }>(zones: Zone[], asked: string | string[] | undefined, mainDomain: string): Zone {
  if (asked === undefined) return zones.find((zone) => zone.domain === mainDomain) ?? zones[0] ?? notFound();
  return zones.find((zone) => String(zone.id) === asked) ?? notFound();
}

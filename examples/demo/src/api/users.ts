export const get = () => ({ data: 1 });

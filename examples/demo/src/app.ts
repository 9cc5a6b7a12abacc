export const app = () => "hello";
